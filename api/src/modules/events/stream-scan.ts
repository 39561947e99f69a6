/**
 * A byte scanner over an ingest body as it arrives: it finds each element of the top-level `events`
 * array of `{"events": [ {...}, ... ]}` (JSON whitespace allowed anywhere between tokens) and hands
 * out its bytes, whole, however the chunks split strings, escapes or numbers. It takes only that
 * shape: one key, spelled `"events"` without escapes, whose array holds at least one object nested
 * at most two levels (an event and its metadata). Anything else (another key, a scalar element, a
 * deeper value, bytes after the closing brace, a byte-order mark) makes it answer `false`, and the
 * caller leaves the body to the ordinary parser: the scanner never decides that a body is invalid.
 */
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, OPEN_BRACE, OPEN_BRACKET, QUOTE } from '../../kit/input-guards.ts';

const WS = new Uint8Array(256);
for (const b of [0x20, 0x09, 0x0a, 0x0d]) WS[b] = 1;
const COLON = 0x3a;
const COMMA = 0x2c;
const KEY = Buffer.from('events');

/** An event object nests its metadata object, nothing deeper. */
const MAX_ELEMENT_DEPTH = 2;

const enum Phase {
  Start, // before `{`
  Key, // after `{`: the key's opening quote
  KeyText, // inside the key
  Colon,
  Array, // after `:`: `[`
  FirstElement, // after `[`: an element (an empty array is not taken)
  Element, // inside an element
  AfterElement, // `,` or `]`
  Close, // after `]`: `}`
  Done, // after `}`: whitespace only
}

export class EventsArrayScanner {
  private phase = Phase.Start;
  private key: number[] = [];
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Bytes of the element in progress from earlier chunks. */
  private parts: Buffer[] = [];
  /** Elements found so far. */
  count = 0;

  /** Whether the whole body (closing brace included) has been seen. */
  get complete(): boolean {
    return this.phase === Phase.Done;
  }

  /**
   * Scans the next chunk and calls `element` with the bytes of each element it completes; returns
   * false (and ignores whatever follows) as soon as the body is not of the shape it takes.
   */
  push(chunk: Buffer, element: (bytes: Buffer) => void): boolean {
    let start = this.phase === Phase.Element ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i]!;
      switch (this.phase) {
        case Phase.Element:
          if (this.inString) {
            if (this.escaped) this.escaped = false;
            else if (b === BACKSLASH) this.escaped = true;
            else if (b === QUOTE) this.inString = false;
          } else if (b === QUOTE) {
            this.inString = true;
          } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
            if (++this.depth > MAX_ELEMENT_DEPTH) return false;
          } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
            if (--this.depth === 0) {
              const last = chunk.subarray(start, i + 1);
              const bytes = this.parts.length ? Buffer.concat([...this.parts, last]) : last;
              this.parts = [];
              start = -1;
              this.count++;
              this.phase = Phase.AfterElement;
              element(bytes);
            }
          }
          break;
        case Phase.Start:
          if (b === OPEN_BRACE) this.phase = Phase.Key;
          else if (!WS[b]) return false;
          break;
        case Phase.Key:
          if (b === QUOTE) this.phase = Phase.KeyText;
          else if (!WS[b]) return false;
          break;
        case Phase.KeyText:
          if (b === QUOTE) {
            if (this.key.length !== KEY.length || this.key.some((k, j) => k !== KEY[j])) return false;
            this.phase = Phase.Colon;
          } else if (b === BACKSLASH || this.key.length >= KEY.length) return false;
          else this.key.push(b);
          break;
        case Phase.Colon:
          if (b === COLON) this.phase = Phase.Array;
          else if (!WS[b]) return false;
          break;
        case Phase.Array:
          if (b === OPEN_BRACKET) this.phase = Phase.FirstElement;
          else if (!WS[b]) return false;
          break;
        case Phase.FirstElement:
          if (b === OPEN_BRACE) {
            this.phase = Phase.Element;
            this.depth = 1;
            start = i;
          } else if (!WS[b]) return false;
          break;
        case Phase.AfterElement:
          if (b === COMMA) this.phase = Phase.FirstElement;
          else if (b === CLOSE_BRACKET) this.phase = Phase.Close;
          else if (!WS[b]) return false;
          break;
        case Phase.Close:
          if (b === CLOSE_BRACE) this.phase = Phase.Done;
          else if (!WS[b]) return false;
          break;
        case Phase.Done:
          if (!WS[b]) return false;
          break;
      }
    }
    if (this.phase === Phase.Element) this.parts.push(chunk.subarray(start));
    return true;
  }
}
