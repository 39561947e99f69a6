/** The part of madge's API the import-graph test uses (madge ships no types). */
declare module 'madge' {
  interface MadgeResult {
    circular(): string[][];
  }
  export default function madge(paths: string | string[], config?: Record<string, unknown>): Promise<MadgeResult>;
}
