import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';

/**
 * Writes a small file so that after a crash or a power cut it is either absent or complete,
 * never empty or half-written: the bytes go to a temporary file in the same directory, which is
 * fsynced, then moved into place, and the directory is fsynced so the new name is on disk too.
 * (A plain writeFileSync left generated keys 0 bytes long after a power cut: the file's name
 * reached the disk before its data.)
 *
 * `exclusive`: never replace an existing file (two processes generating a key at once: the
 * first wins, the second gets EEXIST and reads the winner's), by hard-linking the temporary
 * file into place instead of renaming it.
 */
export function writeFileDurably(
  file: string,
  data: string | Buffer,
  options: { mode?: number; exclusive?: boolean } = {},
): void {
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(temp, 'wx', options.mode ?? 0o644);
  try {
    writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    if (options.exclusive) linkSync(temp, file);
    else renameSync(temp, file);
  } finally {
    if (options.exclusive) unlinkSync(temp);
    else {
      try {
        unlinkSync(temp);
      } catch {
        // renamed: nothing left behind
      }
    }
  }
  const dirFd = openSync(dir, 'r');
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
}
