/**
 * Row locks take the root row only. A MikroORM lock (`lockMode: PESSIMISTIC_*`) whose query joins other
 * tables (populate, a joined strategy, `fields` with relation paths, a `where` over a relation) puts
 * `FOR UPDATE OF` every joined alias on the statement: it locked the product, price and organization
 * rows a checkout joins and deadlocked with a fulfilment inserting rows that reference them. Such a
 * lock must say `lockTableAliases: [<root alias>]`. Raw SQL that locks over a join must say `of <alias>`.
 * Read with the TypeScript compiler, so options written over several lines, spread or kept in a
 * constant are understood.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { parse, root, serverSources, walk, where } from './source-scan.ts';

const SOURCES = ['api/src', 'workflows/src', 'workers/src'];
/** Every LockMode but these takes a row lock: PESSIMISTIC_(WRITE|READ)[_OR_FAIL] and PESSIMISTIC_PARTIAL_(WRITE|READ). */
const NOT_A_LOCK = /^(OPTIMISTIC|NONE)$/;
const FINDERS = new Set(['findOne', 'findOneOrFail', 'find', 'findAll', 'findAndCount', 'findByCursor', 'count', 'stream']);
const QUERY_OPTIONS_JOINING = ['populate', 'strategy', 'fields', 'exclude'];

type Load = (file: string) => string | undefined;
const fromDisk: Load = (file) => (existsSync(path.join(root, file)) ? readFileSync(path.join(root, file), 'utf8') : undefined);

interface Resolved {
  node: ts.Expression;
  sf: ts.SourceFile;
}

class Resolver {
  private parsed = new Map<string, ts.SourceFile | null>();
  constructor(private load: Load) {}

  file(name: string): ts.SourceFile | null {
    if (!this.parsed.has(name)) {
      const text = this.load(name);
      this.parsed.set(name, text === undefined ? null : parse(name, text));
    }
    return this.parsed.get(name)!;
  }

  /** The expression behind `e`: parentheses and type assertions dropped, constants (also imported ones) followed. */
  value(e: ts.Expression, sf: ts.SourceFile, depth = 0): Resolved {
    while (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isNonNullExpression(e) || ts.isTypeAssertionExpression(e)) {
      e = e.expression;
    }
    if (!ts.isIdentifier(e) || depth > 5) return { node: e, sf };
    const found = this.declaration(e.text, sf);
    return found ? this.value(found.node, found.sf, depth + 1) : { node: e, sf };
  }

  /** The initializer of the constant `name` declared in `sf`, or exported by the module it is imported from. */
  private declaration(name: string, sf: ts.SourceFile): Resolved | null {
    const { constants, imports } = this.names(sf);
    const init = constants.get(name);
    if (init) return { node: init, sf };
    const from = imports.get(name);
    const other = from ? this.file(from) : null;
    return other ? this.declaration(name, other) : null;
  }

  private index = new Map<ts.SourceFile, { constants: Map<string, ts.Expression>; imports: Map<string, string> }>();

  /** The file's variables with an initializer (the first of each name) and its relative named imports. */
  private names(sf: ts.SourceFile) {
    let found = this.index.get(sf);
    if (found) return found;
    found = { constants: new Map<string, ts.Expression>(), imports: new Map<string, string>() };
    const { constants, imports } = found;
    walk(sf, (n) => {
      if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.initializer && !constants.has(n.name.text)) constants.set(n.name.text, n.initializer);
      if (ts.isImportDeclaration(n) && ts.isStringLiteral(n.moduleSpecifier) && n.moduleSpecifier.text.startsWith('.')) {
        const bindings = n.importClause?.namedBindings;
        const from = path.join(path.dirname(sf.fileName), n.moduleSpecifier.text);
        if (bindings && ts.isNamedImports(bindings)) for (const s of bindings.elements) imports.set(s.name.text, from);
      }
    });
    this.index.set(sf, found);
    return found;
  }
}

/** The properties of an options object, spreads of known objects included; `unknown` names a spread it cannot read. */
function optionProperties(o: ts.ObjectLiteralExpression, sf: ts.SourceFile, r: Resolver): { props: Map<string, Resolved>; unknown: string[] } {
  const props = new Map<string, Resolved>();
  const unknown: string[] = [];
  for (const p of o.properties) {
    if (ts.isPropertyAssignment(p) && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name))) props.set(p.name.text, { node: p.initializer, sf });
    else if (ts.isShorthandPropertyAssignment(p)) props.set(p.name.text, r.value(p.name, sf));
    else if (ts.isSpreadAssignment(p)) {
      const v = r.value(p.expression, sf);
      if (ts.isObjectLiteralExpression(v.node)) {
        const inner = optionProperties(v.node, v.sf, r);
        for (const [k, x] of inner.props) props.set(k, x);
        unknown.push(...inner.unknown);
      } else unknown.push(p.expression.getText(sf));
    }
  }
  return { props, unknown };
}

function isLockMode(v: Resolved, r: Resolver): boolean {
  const e = r.value(v.node, v.sf);
  if (ts.isConditionalExpression(e.node)) return isLockMode({ node: e.node.whenTrue, sf: e.sf }, r) || isLockMode({ node: e.node.whenFalse, sf: e.sf }, r);
  if (ts.isPropertyAccessExpression(e.node)) return !NOT_A_LOCK.test(e.node.name.text);
  if (e.node.kind === ts.SyntaxKind.UndefinedKeyword || (ts.isIdentifier(e.node) && e.node.text === 'undefined')) return false;
  return true; // a value the guard cannot read counts as a lock
}

/** Why the options `o` make the statement join other tables (empty: it reads the root table only). */
function joiningOptions(props: Map<string, Resolved>, r: Resolver): string[] {
  const why: string[] = [];
  for (const key of QUERY_OPTIONS_JOINING) {
    const v = props.get(key);
    if (!v) continue;
    const e = r.value(v.node, v.sf).node;
    if (e.kind === ts.SyntaxKind.FalseKeyword || (ts.isArrayLiteralExpression(e) && e.elements.length === 0)) continue;
    if (key === 'strategy') {
      if (/joined/i.test(e.getText())) why.push('a joined load strategy');
    } else if (key === 'populate') {
      why.push(`populate ${v.node.getText(v.sf).slice(0, 80)}`);
    } else {
      const paths = ts.isArrayLiteralExpression(e) ? e.elements.filter((x) => !ts.isStringLiteralLike(x) || x.text.includes('.')) : [e];
      if (paths.length) why.push(`${key} with relation paths (${paths.map((x) => x.getText()).join(', ').slice(0, 80)})`);
    }
  }
  return why;
}

/** Relation paths a `where` condition joins (`{ customer: { email } }`, `'customer.email'`, `$some`). */
function joiningWhere(v: Resolved, r: Resolver, depth = 0): string[] {
  const { node: e, sf } = r.value(v.node, v.sf);
  if (depth > 8) return [];
  if (ts.isConditionalExpression(e)) return [...joiningWhere({ node: e.whenTrue, sf }, r, depth + 1), ...joiningWhere({ node: e.whenFalse, sf }, r, depth + 1)];
  if (ts.isArrayLiteralExpression(e)) return e.elements.flatMap((x) => joiningWhere({ node: x, sf }, r, depth + 1));
  if (!ts.isObjectLiteralExpression(e)) return [];
  const out: string[] = [];
  for (const p of e.properties) {
    if (ts.isSpreadAssignment(p)) {
      out.push(...joiningWhere({ node: p.expression, sf }, r, depth + 1));
      continue;
    }
    if (!ts.isPropertyAssignment(p)) continue;
    const key = ts.isIdentifier(p.name) || ts.isStringLiteral(p.name) ? p.name.text : p.name.getText(sf);
    if (/^\$(some|every|none)$/.test(key)) out.push(key);
    else if (key.startsWith('$')) out.push(...joiningWhere({ node: p.initializer, sf }, r, depth + 1));
    else if (key.includes('.')) out.push(key);
    else {
      const value = r.value(p.initializer, sf).node;
      if (ts.isObjectLiteralExpression(value)) {
        const keys = value.properties.map((q) => (q.name && (ts.isIdentifier(q.name) || ts.isStringLiteral(q.name)) ? q.name.text : '...'));
        if (keys.some((k) => !k.startsWith('$'))) out.push(key);
        else out.push(...joiningWhere({ node: value, sf }, r, depth + 1).map((x) => `${key}.${x}`));
      }
    }
  }
  return out;
}

/** The finder call (`tx.findOne(Entity, where, options)`) the options object is the argument of, if any. */
function finderCall(o: ts.Node): ts.CallExpression | null {
  let n: ts.Node = o;
  while (
    n.parent &&
    (ts.isParenthesizedExpression(n.parent) ||
      ts.isConditionalExpression(n.parent) ||
      ts.isAsExpression(n.parent) ||
      ts.isSatisfiesExpression(n.parent) ||
      (ts.isBinaryExpression(n.parent) && [ts.SyntaxKind.QuestionQuestionToken, ts.SyntaxKind.BarBarToken].includes(n.parent.operatorToken.kind)))
  ) {
    n = n.parent;
  }
  const call = n.parent;
  if (!call || !ts.isCallExpression(call) || !call.arguments.includes(n as ts.Expression)) return null;
  const callee = call.expression;
  return ts.isPropertyAccessExpression(callee) && FINDERS.has(callee.name.text) ? call : null;
}

/** MikroORM's alias of a query's root table (the default naming strategy: first letter of the entity, then 0). */
function rootAlias(entity: ts.Expression | undefined): string | null {
  return entity && ts.isIdentifier(entity) ? `${entity.text.charAt(0).toLowerCase()}0` : null;
}

/** Findings of the MikroORM locks in `files`: `file:line` and what is wrong. */
export function ormLockFindings(files: string[], load: Load = fromDisk): string[] {
  const r = new Resolver(load);
  const findings: string[] = [];
  for (const file of files) {
    if (!/lockMode|setLockMode/.test(load(file) ?? '')) continue;
    const sf = r.file(file);
    if (!sf) continue;
    walk(sf, (n) => {
      if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && n.expression.name.text === 'setLockMode' && n.arguments.length < 2) {
        findings.push(`${where(sf, n)}: setLockMode without the tables to lock (pass [rootAlias])`);
      }
      if (!ts.isObjectLiteralExpression(n)) return;
      const own = n.properties.find((p) => p.name?.getText(sf) === 'lockMode');
      if (!own) return;
      const { props, unknown } = optionProperties(n, sf, r);
      const mode = props.get('lockMode');
      if (!mode || !isLockMode(mode, r)) return;
      const at = where(sf, own);
      const call = finderCall(n);
      const entity = call?.arguments[0];
      const whereArg = call ? (call.expression as ts.PropertyAccessExpression).name.text === 'findAll' ? props.get('where') : call.arguments[1] && { node: call.arguments[1], sf } : undefined;
      const why = [
        ...joiningOptions(props, r),
        ...(whereArg ? joiningWhere(whereArg, r).map((p) => `a where over the relation ${p}`) : []),
        ...unknown.map((u) => `options spread from ${u}, which the guard cannot read`),
      ];
      const aliases = props.get('lockTableAliases');
      if (!why.length && !aliases) return;
      if (!aliases) {
        findings.push(`${at}: locks every row it joins (${why.join('; ')}): add lockTableAliases: [${JSON.stringify(rootAlias(entity) ?? '<root alias>')}]`);
        return;
      }
      const list = r.value(aliases.node, aliases.sf).node;
      const only = ts.isArrayLiteralExpression(list) && list.elements.length === 1 ? r.value(list.elements[0]!, aliases.sf).node : null;
      const expected = rootAlias(entity);
      if (!only || !ts.isStringLiteralLike(only)) findings.push(`${at}: lockTableAliases must name the root row's alias only, as one constant string`);
      else if (expected && only.text !== expected) findings.push(`${at}: lockTableAliases ["${only.text}"] is not the root alias of ${entity!.getText(sf)} ("${expected}")`);
    });
  }
  return findings;
}

/** `for update` / `for no key update` / `for share` / `for key share`, and whether `of <alias>` follows. */
const SQL_LOCK = /\bfor\s+(no\s+key\s+update|update|key\s+share|share)\b(\s+of\b)?/gi;

/** The text of the query level that ends at `end` (nested parentheses left out): what its FROM joins. */
function queryLevel(sql: string, end: number): string {
  let depth = 0;
  let out = '';
  for (let i = end - 1; i >= 0; i--) {
    const ch = sql[i]!;
    if (ch === ')') depth++;
    else if (ch === '(') {
      if (depth === 0) break;
      depth--;
    } else if (depth === 0) out = ch + out;
  }
  return out;
}

/** Raw SQL in string and template literals that locks over a join (explicit or a FROM list) without `of <alias>`. */
export function sqlLockFindings(files: string[], load: Load = fromDisk): string[] {
  const findings: string[] = [];
  for (const file of files) {
    const text = load(file);
    if (text === undefined || !/\bfor\s+(no\s+key\s+update|update|key\s+share|share)\b/i.test(text)) continue;
    const sf = parse(file, text);
    walk(sf, (n) => {
      let sql: string | null = null;
      if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) sql = n.text;
      else if (ts.isTemplateExpression(n)) sql = n.head.text + n.templateSpans.map((s) => `\${${s.expression.getText(sf)}}${s.literal.text}`).join('');
      if (!sql || !/\bselect\b/i.test(sql)) return;
      for (const m of sql.matchAll(SQL_LOCK)) {
        if (m[2]) continue;
        const level = queryLevel(sql, m.index);
        const from = /\bfrom\b([\s\S]*)/i.exec(level)?.[1] ?? '';
        const tables = from.split(/\b(where|order\s+by|group\s+by|limit|having|window)\b/i)[0]!;
        if (/\bjoin\b/i.test(tables) || tables.includes(',')) {
          findings.push(`${where(sf, n)}: "${m[0]}" over a join locks every joined row: say "${m[0]} of <alias>"`);
        }
      }
    });
  }
  return findings;
}

const FIXTURE_SCHEMAS = `export const CHECKOUT_ALIAS = 'c0';\nexport const CHECKOUT_POPULATE = ['product', 'organization'] as const;\n`;

/** Fixtures: `api/src/fixture/flagged.ts` holds only what must be found, `accepted.ts` only what must pass. */
const FLAGGED = `
import { LockMode } from '@mikro-orm/core';
import { CHECKOUT_POPULATE } from './schemas.ts';
export async function f(tx: any, id: string, opts: any) {
  const a = await tx.findOne(
    Checkout,
    { id },
    {
      lockMode: LockMode.PESSIMISTIC_WRITE,
      populate: CHECKOUT_POPULATE,
    },
  );
  const b = await tx.findOne(Order, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE_OR_FAIL, fields: ['id', 'customer.email'] });
  const c = await tx.findOne(Subscription, { id, customer: { email: 'a@b.c' } }, { lockMode: LockMode.PESSIMISTIC_READ });
  const base = { populate: ['customer'] } as const;
  const d = await tx.find(Refund, { status: 'pending' }, { ...base, lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE });
  const e = await tx.findOne(Checkout, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, lockTableAliases: ['p1'], populate: ['product'] });
  const g = await tx.findOne(Checkout, { id }, opts.lock ? { lockMode: LockMode.PESSIMISTIC_WRITE, strategy: 'joined', populate: ['product'] } : {});
  const h = await tx.findOne(Checkout, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, ...opts });
  await tx.execute(\`select c.id from checkouts c join products p on p.id = c.product_id where c.id = ? for update\`, [id]);
  await tx.execute('select 1 from customers c, orders o where o.customer_id = c.id for no key update', []);
  return [a, b, c, d, e, g, h];
}
`;
const ACCEPTED = `
import { LockMode } from '@mikro-orm/core';
import { CHECKOUT_ALIAS, CHECKOUT_POPULATE } from './schemas.ts';
export async function f(tx: any, id: string, orgIds: string[]) {
  const a = await tx.findOne(
    Checkout,
    { id },
    {
      lockMode: LockMode.PESSIMISTIC_WRITE,
      lockTableAliases: [CHECKOUT_ALIAS],
      populate: CHECKOUT_POPULATE,
    },
  );
  const b = await tx.findOne(Order, { id, organization: { $in: orgIds } }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  const c = await tx.find(OutboxEvent, { dispatchedAt: null }, { orderBy: { seq: 'asc' }, limit: 10, lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE });
  const d = await tx.findOne(Checkout, { id }, { lockMode: LockMode.OPTIMISTIC, populate: ['product'] });
  const e = await tx.findOne(LicenseKey, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, lockTableAliases: ['l0'], fields: ['id', 'customer.email'] });
  await tx.execute(\`select pb.benefit_id from product_benefits pb join benefits b on b.id = pb.benefit_id where pb.product_id = ? for share of pb\`, [id]);
  await tx.execute(\`update w set x = 1 where w.id in (select id from webhook_events order by created_at limit 5 for update skip locked) returning w.id\`, []);
  await tx.execute(\`with c as (update t set a = 1 where id in (select id from t where b limit 2 for update skip locked) returning id) select c.id, e.url from c join e on e.id = c.id\`, []);
  return [a, b, c, d, e];
}
`;

describe('row locks', () => {
  const load: Load = (file) => ({ 'api/src/fixture/schemas.ts': FIXTURE_SCHEMAS, 'api/src/fixture/flagged.ts': FLAGGED, 'api/src/fixture/accepted.ts': ACCEPTED })[file];

  it('flags a lock that joins without limiting itself to the root row, naming file:line, even over several lines', () => {
    const found = ormLockFindings(['api/src/fixture/flagged.ts'], load);
    expect(found.map((f) => f.split(': ')[0])).toEqual([9, 13, 14, 16, 17, 18, 19].map((l) => `api/src/fixture/flagged.ts:${l}`));
    expect(found[0]).toContain('populate CHECKOUT_POPULATE');
    expect(found[0]).toContain('lockTableAliases: ["c0"]');
    expect(found[1]).toContain('customer.email');
    expect(found[2]).toContain('relation customer');
    expect(found[3]).toContain("populate ['customer']");
    expect(found[4]).toContain('not the root alias of Checkout ("c0")');
    expect(found[5]).toContain('joined load strategy');
    expect(found[6]).toContain('spread from opts');
    expect(sqlLockFindings(['api/src/fixture/flagged.ts'], load).map((f) => f.split(': ')[0])).toEqual([
      'api/src/fixture/flagged.ts:20',
      'api/src/fixture/flagged.ts:21',
    ]);
  });

  it('accepts root-only locks, locks without joins, optimistic locks and raw locks naming their alias', () => {
    expect(ormLockFindings(['api/src/fixture/accepted.ts'], load)).toEqual([]);
    expect(sqlLockFindings(['api/src/fixture/accepted.ts'], load)).toEqual([]);
  });

  it('no lock in api/src, workflows/src or workers/src takes more than its root row', () => {
    const files = serverSources(SOURCES);
    expect(files.length).toBeGreaterThan(100);
    const locks = files.filter((f) => /lockMode|for\s+(no\s+key\s+)?(update|share)/i.test(readFileSync(path.join(root, f), 'utf8')));
    expect(locks.length).toBeGreaterThan(10);
    expect([...ormLockFindings(files), ...sqlLockFindings(files)]).toEqual([]);
  });
});
