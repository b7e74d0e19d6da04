import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { makePrivateDir } from './data-dir.js';
import { writeFileDurably } from './durable-file.js';

/**
 * Secrets at rest (the stores' Conversions API access tokens): AES-256-GCM with a random
 * 96-bit nonce per value. The owning record's id is bound in as associated data, so a sealed
 * value copied onto another record does not open there.
 */
const PREFIX = 'wtenc1:';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
export const KEY_FILE = 'secrets.key';

export class SecretError extends Error {}

export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new SecretError('the secrets key must be 32 bytes');
  }

  static isSealed(value: string): boolean {
    return value.startsWith(PREFIX);
  }

  seal(plaintext: string, context: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([nonce, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** The plaintext; throws SecretError when the value was sealed with another key or for another record, or was altered. */
  open(sealed: string, context: string): string {
    if (!SecretBox.isSealed(sealed)) throw new SecretError('value is not sealed');
    const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64url');
    if (raw.length < NONCE_BYTES + TAG_BYTES) throw new SecretError('sealed value is truncated');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, NONCE_BYTES));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(raw.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretError('sealed value does not open with this key (SECRETS_KEY changed, or the value was altered)');
    }
  }
}

/**
 * The key: SECRETS_KEY when configured, else `DATA_DIR/secrets.key`, generated (mode 0600) on
 * first start. Instances that share one database must share SECRETS_KEY.
 */
export function loadSecretsKey(options: { secretsKey: Buffer | undefined; dataDir: string }): Buffer {
  if (options.secretsKey) return options.secretsKey;
  const file = path.join(options.dataDir, KEY_FILE);
  makePrivateDir(options.dataDir);
  try {
    // Exclusive: never overwrite a key another process just wrote (that would orphan its
    // ciphertexts); durable: a power cut leaves no key or the whole key, never an empty file.
    writeFileDurably(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, exclusive: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new SecretError(`${file} does not hold a 32-byte base64 key`);
  return key;
}
