/** Source files of the server code, parsed with the TypeScript compiler, for the guard tests of tests/unit. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The TypeScript files under `dirs` (relative to the repository), tests excluded. */
export function serverSources(dirs: string[]): string[] {
  return dirs.flatMap((d) =>
    readdirSync(path.join(root, d), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && /\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts'))
      .map((e) => path.relative(root, path.join(e.parentPath, e.name))),
  );
}

export function parse(file: string, text = readFileSync(path.join(root, file), 'utf8')): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
}

/** `file:line` of a node (1-based line). */
export function where(sf: ts.SourceFile, node: ts.Node): string {
  return `${sf.fileName}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}`;
}

export function walk(node: ts.Node, visit: (n: ts.Node) => void): void {
  visit(node);
  ts.forEachChild(node, (c) => walk(c, visit));
}
