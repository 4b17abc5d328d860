/**
 * Locates the YAML frontmatter of a SKILL.md in raw bytes, without decoding the body.
 *
 * A frontmatter is a first line `---` (an optional UTF-8 byte-order mark before it, trailing
 * spaces allowed), then YAML, then a closing line `---`. Anything else at the start of the
 * file means the file has no frontmatter.
 */

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const DASH = 0x2d;
const SPACE = 0x20;
const TAB = 0x09;

/** Where the frontmatter is, or why it cannot be found in the bytes given. */
export type FrontmatterLocation =
  | { kind: "found"; yamlStart: number; yamlEnd: number; bodyStart: number }
  /** The file does not start with a `---` line. */
  | { kind: "missing" }
  /** The closing `---` is not in the bytes given (unterminated when they are the whole file). */
  | { kind: "open" };

function isBlank(byte: number | undefined): boolean {
  return byte === SPACE || byte === TAB || byte === CARRIAGE_RETURN;
}

/**
 * End of the line that starts at `start` if that line is `---` (trailing blanks allowed):
 * the index just past its newline, `-1` when it is not such a line, or `-2` when the bytes end
 * before the line does (more bytes are needed to decide).
 */
function dashLineEnd(bytes: Uint8Array, start: number, length: number, complete: boolean): number {
  if (start + 3 > length) return complete ? -1 : -2;
  if (bytes[start] !== DASH || bytes[start + 1] !== DASH || bytes[start + 2] !== DASH) return -1;
  let index = start + 3;
  while (index < length && isBlank(bytes[index])) index++;
  if (index === length) return complete ? length : -2;
  return bytes[index] === NEWLINE ? index + 1 : -1;
}

/**
 * Finds the frontmatter in `bytes[0..length)`. `complete` tells whether those bytes are the
 * whole file; when they are not, a `---` at the very end is not yet taken as the closing line.
 */
export function locateFrontmatter(bytes: Uint8Array, length: number, complete: boolean): FrontmatterLocation {
  let start = 0;
  if (length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) start = 3;
  const opening = dashLineEnd(bytes, start, length, complete);
  if (opening === -1) return { kind: "missing" };
  if (opening === -2 || opening === length) return { kind: "open" };
  // The closing line starts right after a newline; the opening line's own newline counts, so an
  // empty frontmatter (`---\n---`) is found too.
  let newline = opening - 1;
  while (newline !== -1 && newline < length) {
    const lineStart = newline + 1;
    const end = dashLineEnd(bytes, lineStart, length, complete);
    if (end === -2) return { kind: "open" };
    if (end >= 0) {
      let yamlEnd = lineStart === opening ? opening : newline;
      if (yamlEnd > opening && bytes[yamlEnd - 1] === CARRIAGE_RETURN) yamlEnd--;
      return { kind: "found", yamlStart: opening, yamlEnd, bodyStart: end };
    }
    newline = indexOfByte(bytes, NEWLINE, lineStart, length);
  }
  return { kind: "open" };
}

function indexOfByte(bytes: Uint8Array, byte: number, from: number, length: number): number {
  const index = bytes.indexOf(byte, from);
  return index === -1 || index >= length ? -1 : index;
}
