/**
 * Two-factor state of a user: the TOTP secret (sealed with SECRET, never stored in clear), the last
 * TOTP time step accepted (a code is good once), and the backup codes (SHA-256 only, one row each,
 * deleted on use).
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties } from '../../kit/entity.ts';
import { User } from '../entities.ts';

export const TwoFactor = defineEntity({
  name: 'TwoFactor',
  tableName: 'two_factors',
  properties: {
    ...baseProperties,
    user: () => p.manyToOne(User).deleteRule('cascade').unique(),
    secretSealed: p.text().hidden(),
    lastTotpStep: p.bigint('number').nullable(),
  },
});
export type TwoFactor = InferEntity<typeof TwoFactor>;

export const TwoFactorBackupCode = defineEntity({
  name: 'TwoFactorBackupCode',
  tableName: 'two_factor_backup_codes',
  properties: {
    ...baseProperties,
    user: () => p.manyToOne(User).deleteRule('cascade').index(),
    codeHash: p.string().hidden(),
  },
  uniques: [{ properties: ['user', 'codeHash'] }],
});
export type TwoFactorBackupCode = InferEntity<typeof TwoFactorBackupCode>;
