import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Checks `Authorization: Bearer <token>` against the shared secret. Both sides are hashed first so the
 * comparison takes the same time whatever the length or content of the presented token: neither the secret's
 * length nor a matching prefix can be learned by timing.
 */
export class BearerCheck {
  private readonly expected: Buffer;

  constructor(secret: string) {
    this.expected = digest(secret);
  }

  /** True when the header carries the secret. */
  matches(header: string | undefined): boolean {
    if (header === undefined) return false;
    const m = /^bearer +([^\s]+) *$/i.exec(header);
    // Hash something even when the header is malformed, so the reject path costs the same.
    const presented = digest(m ? m[1] : header);
    return timingSafeEqual(presented, this.expected) && m !== null;
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
