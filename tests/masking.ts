/**
 * JSON of two runs of one operation made comparable: every match of a kind's pattern is numbered per
 * kind in order of first appearance (`<id0>`, `<id1>`, …), and every match of the kind `time` is one
 * placeholder (two timestamps of one run may fall in the same millisecond or not). Kinds apply in the
 * order given.
 */
export function masked(value: unknown, kinds: readonly (readonly [string, RegExp])[]): unknown {
  let text = JSON.stringify(value);
  for (const [kind, re] of kinds) {
    const seen = new Map<string, string>();
    text = text.replace(re, (m) => {
      if (kind === 'time') return '<time>';
      if (!seen.has(m)) seen.set(m, `<${kind}${seen.size}>`);
      return seen.get(m)!;
    });
  }
  return JSON.parse(text);
}
