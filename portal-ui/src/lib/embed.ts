/**
 * Embedded checkout: in an iframe on the checkout's `embed_origin`, the page tells its parent what
 * happens, with the messages Polar's checkout embed sends (`{type: 'POLAR_CHECKOUT', event, ...}`).
 */
export type EmbedMessage =
  | { event: 'loaded' }
  | { event: 'close' }
  | { event: 'confirmed' }
  | { event: 'success'; successURL: string; redirect: boolean };

export const EMBED_MESSAGE_TYPE = 'POLAR_CHECKOUT';

export function isEmbedded(): boolean {
  try {
    return window.parent !== window;
  } catch {
    return true;
  }
}

export function postToParent(embedOrigin: string | null | undefined, message: EmbedMessage): void {
  if (!embedOrigin || !isEmbedded()) return;
  try {
    window.parent.postMessage({ ...message, type: EMBED_MESSAGE_TYPE }, new URL(embedOrigin).origin);
  } catch {
    // A malformed origin: say nothing rather than broadcast to '*'.
  }
}
