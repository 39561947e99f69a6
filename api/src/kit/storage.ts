/** Object storage through the `minio` client against any S3-compatible server. */
import { Readable } from 'node:stream';
import * as Minio from 'minio';
import type { Config } from '../config.ts';

export interface Storage {
  client: Minio.Client;
  bucket: string;
  publicBucket: string;
  put(bucket: string, key: string, body: Buffer | string, contentType?: string): Promise<{ etag: string }>;
  get(bucket: string, key: string): Promise<Buffer>;
  remove(bucket: string, key: string): Promise<void>;
  presignedGet(bucket: string, key: string, expirySeconds: number): Promise<string>;
  publicUrl(key: string): string;
  ping(): Promise<boolean>;
}

export function createStorage(cfg: Config): Storage {
  const u = new URL(cfg.S3_ENDPOINT);
  const client = new Minio.Client({
    endPoint: u.hostname,
    port: Number(u.port || (u.protocol === 'https:' ? 443 : 80)),
    useSSL: u.protocol === 'https:',
    accessKey: cfg.S3_ACCESS_KEY,
    secretKey: cfg.S3_SECRET_KEY,
    region: cfg.S3_REGION,
    pathStyle: true,
  });
  return {
    client,
    bucket: cfg.S3_BUCKET,
    publicBucket: cfg.S3_PUBLIC_BUCKET,
    async put(bucket, key, body, contentType = 'application/octet-stream') {
      const buf = typeof body === 'string' ? Buffer.from(body) : body;
      const info = await client.putObject(bucket, key, buf, buf.length, { 'Content-Type': contentType });
      return { etag: info.etag };
    },
    async get(bucket, key) {
      const stream: Readable = await client.getObject(bucket, key);
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    },
    async remove(bucket, key) {
      await client.removeObject(bucket, key);
    },
    presignedGet: (bucket, key, expiry) => client.presignedGetObject(bucket, key, expiry),
    publicUrl: (key) => `${cfg.S3_ENDPOINT.replace(/\/$/, '')}/${cfg.S3_PUBLIC_BUCKET}/${key.split('/').map(encodeURIComponent).join('/')}`,
    async ping() {
      return client.bucketExists(cfg.S3_BUCKET);
    },
  };
}
