/** WebAuthn credentials (passkeys) of users: the public key and signature counter of each authenticator. */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties } from '../../kit/entity.ts';
import { User } from '../entities.ts';

export const Passkey = defineEntity({
  name: 'Passkey',
  tableName: 'passkeys',
  properties: {
    ...baseProperties,
    user: () => p.manyToOne(User).deleteRule('cascade').index(),
    name: p.string().nullable(),
    /** The COSE public key, base64. */
    publicKey: p.text(),
    /** The credential id, base64url, as the browser reports it. */
    credentialId: p.string().length(1024).unique(),
    counter: p.bigint('number').default(0),
    deviceType: p.string(),
    backedUp: p.boolean(),
    transports: p.string().nullable(),
    aaguid: p.string().nullable(),
  },
});
export type Passkey = InferEntity<typeof Passkey>;
