/**
 * No error is dropped without a word. An empty swallow (`.catch(() => {})`, `.catch(() => null)` and
 * other handlers that ignore the error and only give a constant, `catch {}` / `catch (_) {}`) in the
 * server code must carry its reason, `// ignore: <reason>` on its line, the line above or inside it;
 * anything a user or operator would need to know (money, grants, mails, events, recomputes,
 * idempotency records) is logged with its ids or propagated instead. Read with the TypeScript compiler.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { parse, root, serverSources, walk, where } from './source-scan.ts';

const SOURCES = ['api/src', 'workers/src', 'workflows/src'];
const ALLOW = /\/\/\s*ignore:\s*\S/;

/** An expression that is only a constant: what a handler gives back when it drops the error. */
function isConstant(e: ts.Expression): boolean {
  while (ts.isParenthesizedExpression(e) || ts.isAsExpression(e)) e = e.expression;
  if (ts.isVoidExpression(e)) return isConstant(e.expression);
  if (ts.isArrayLiteralExpression(e)) return e.elements.length === 0;
  if (ts.isObjectLiteralExpression(e)) return e.properties.length === 0;
  return (
    ts.isLiteralExpression(e) ||
    ts.isNoSubstitutionTemplateLiteral(e) ||
    (ts.isIdentifier(e) && e.text === 'undefined') ||
    [ts.SyntaxKind.NullKeyword, ts.SyntaxKind.TrueKeyword, ts.SyntaxKind.FalseKeyword].includes(e.kind) ||
    (ts.isPrefixUnaryExpression(e) && ts.isNumericLiteral(e.operand))
  );
}

/** A rejection handler that ignores its error and does nothing but give a constant (or nothing). */
function isEmptyHandler(h: ts.Expression): boolean {
  if (!ts.isArrowFunction(h) && !ts.isFunctionExpression(h)) return false;
  const param = h.parameters[0]?.name;
  if (param && ts.isIdentifier(param) && !param.text.startsWith('_')) {
    let used = false;
    walk(h.body, (n) => {
      if (ts.isIdentifier(n) && n.text === param.text) used = true;
    });
    if (used) return false;
  }
  if (!ts.isBlock(h.body)) return isConstant(h.body);
  const [only, ...rest] = h.body.statements;
  return !only || (!rest.length && ts.isReturnStatement(only) && (!only.expression || isConstant(only.expression)));
}

/** Whether `// ignore: <reason>` is on the node's first line, the line above it, or inside it. */
function allowed(sf: ts.SourceFile, node: ts.Node): boolean {
  const lines = sf.text.split('\n');
  const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
  return ALLOW.test(lines[line] ?? '') || ALLOW.test(lines[line - 1] ?? '') || ALLOW.test(node.getText(sf));
}

/** `file:line` of every empty swallow in `files` that does not say why. */
export function swallows(files: { name: string; text: string }[]): string[] {
  const out: string[] = [];
  for (const { name, text } of files) {
    if (!/catch/.test(text)) continue;
    const sf = parse(name, text);
    walk(sf, (n) => {
      if (ts.isCatchClause(n) && n.block.statements.length === 0 && !allowed(sf, n)) {
        out.push(`${where(sf, n)}: ${n.getText(sf).replace(/\s+/g, ' ').slice(0, 80)}`);
      }
      if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression)) {
        const method = n.expression.name.text;
        const handler = method === 'catch' ? n.arguments[0] : method === 'then' ? n.arguments[1] : undefined;
        if (handler && isEmptyHandler(handler) && !allowed(sf, n.expression.name)) {
          out.push(`${where(sf, n.expression.name)}: .${method}(${handler.getText(sf).replace(/\s+/g, ' ').slice(0, 80)})`);
        }
      }
    });
  }
  return out;
}

const FLAGGED = `export async function f(p: Promise<unknown>, mail: { send(): Promise<void> }) {
  await p.catch(() => {});
  await p.catch((_err) => undefined);
  await p.catch(() => null);
  await p.then(
    () => 1,
    () => false,
  );
  await mail.send().catch(function () {});
  try {
    await p;
  } catch {}
  try {
    await p;
  } catch (_e) {
    // the money is gone, who knows
  }
  await p.catch((err) => {
    return [];
  });
}
`;
const ACCEPTED = `export async function f(p: Promise<unknown>, log: { warn(o: object, m: string): void }) {
  await p.catch((err: unknown) => log.warn({ err }, 'not sent'));
  await p.catch(() => {}); // ignore: the socket is already closed
  // ignore: an unreadable body is answered below
  const body = await p.catch(() => null);
  try {
    JSON.parse(String(body));
  } catch {
    // ignore: a body that is not JSON is kept as text
  }
  try {
    await p;
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
  }
  try {
    await p;
  } catch {
    return 'fallback';
  }
  await p.catch((err) => (err instanceof Error ? null : Promise.reject(err)));
  return body;
}
`;

describe('swallowed errors', () => {
  it('flags every empty swallow without a reason, naming file:line, and accepts logged, reasoned or rethrown ones', () => {
    const flagged = swallows([{ name: 'api/src/fixture/flagged.ts', text: FLAGGED }]);
    expect(flagged.map((f) => f.split(': ')[0])).toEqual([2, 3, 4, 5, 9, 12, 15, 18].map((l) => `api/src/fixture/flagged.ts:${l}`));
    expect(swallows([{ name: 'api/src/fixture/accepted.ts', text: ACCEPTED }])).toEqual([]);
  });

  it('no empty swallow in api/src, workers/src or workflows/src without "// ignore: <reason>"', () => {
    const files = serverSources(SOURCES).map((name) => ({ name, text: readFileSync(path.join(root, name), 'utf8') }));
    expect(files.length).toBeGreaterThan(100);
    expect(swallows(files)).toEqual([]);
  });
});
