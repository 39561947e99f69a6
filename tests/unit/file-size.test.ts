/** No source file over 400 lines unless its first line says why (`// Over 400 lines: <reason>`). */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const scratch = mkdtempSync(path.join(tmpdir(), 'file-size-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const LIMIT = 400;
const SOURCES = ['api/src', 'workers/src', 'workflows/src', 'admin-ui/src', 'portal-ui/src'];
const EXEMPTION = /^\/\/ Over 400 lines: \S.*/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name))
    .map((e) => path.join(e.parentPath, e.name))
    .filter((f) => !f.split(path.sep).includes('migrations'));
}

function oversized(files: string[]): string[] {
  return files.filter((f) => {
    const text = readFileSync(f, 'utf8');
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    return lines > LIMIT && !EXEMPTION.test(text.split('\n', 1)[0]!);
  });
}

describe('file size', () => {
  it('flags a long file without a reason, not one with a reason or a short one', () => {
    const long = Array.from({ length: LIMIT + 1 }, (_, i) => `export const v${i} = ${i};`).join('\n') + '\n';
    const files = {
      long: path.join(scratch, 'long.ts'),
      reasoned: path.join(scratch, 'reasoned.ts'),
      short: path.join(scratch, 'short.ts'),
    };
    writeFileSync(files.long, long);
    writeFileSync(files.reasoned, `// Over 400 lines: one table the spec lists in full\n${long}`);
    writeFileSync(files.short, long.split('\n').slice(0, LIMIT).join('\n') + '\n');
    expect(oversized(Object.values(files))).toEqual([files.long]);
  });

  it('no source file is over 400 lines without a one-line reason at its top', () => {
    const files = SOURCES.flatMap((d) => sourceFiles(path.join(root, d)));
    expect(files.length).toBeGreaterThan(100);
    expect(oversized(files).map((f) => path.relative(root, f))).toEqual([]);
  });
});
