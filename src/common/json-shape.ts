/**
 * A cheap look at raw JSON before it is parsed: how deep its arrays and objects nest and how many
 * keys and elements they hold, counted in one pass over the bytes. Parsing a body builds every
 * object before any check sees it, so 100 bodies of 49 KB with 5,000 keys each, or arrays nested
 * 24,000 deep, held the event loop for about a second; counted first, they are refused unbuilt.
 * Malformed JSON is left to the parser: this only counts.
 */
export interface JsonShapeLimits {
  /** Deeper nesting is refused (the root container is level 1). */
  maxDepth: number;
  /** More keys plus array elements than this, in the whole body, are refused. */
  maxEntries: number;
}

export type JsonShapeProblem = 'too-deep' | 'too-many-entries';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

const isSpace = (byte: number): boolean =>
  byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

/**
 * Where the string whose text starts at `from` ends: its first quote after an even number of
 * backslashes (each backslash escapes the byte after it), or the end of `json`. Found by
 * `indexOf`, which a Buffer runs natively: strings are most of a traffic report's bytes (ids and
 * keys), and stepping through them a byte at a time was most of this check's 1.9 ms a report.
 */
function closingQuote(json: Uint8Array, from: number): number {
  for (let at = json.indexOf(QUOTE, from); at !== -1; at = json.indexOf(QUOTE, at + 1)) {
    let backslashes = 0;
    while (json[at - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
  return json.length;
}

/**
 * The first limit `json` goes past, or null. Keys are the `:` outside strings; elements are an
 * array's first value and each `,` after it. UTF-8 continuation bytes are all above 0x7f, so no
 * byte of a multi-byte character is taken for a bracket or a quote.
 */
export function jsonShapeProblem(
  json: Uint8Array,
  limits: JsonShapeLimits,
): JsonShapeProblem | null {
  // Whether each open container is an array, by level; nothing deeper than the limit is kept.
  const inArray = new Uint8Array(limits.maxDepth + 2);
  let depth = 0;
  let entries = 0;
  // Right after `[`: the next value, unless `]`, is the array's first element.
  let arrayOpened = false;
  for (let i = 0; i < json.length; i++) {
    const byte = json[i];
    if (isSpace(byte)) continue;
    if (arrayOpened) {
      arrayOpened = false;
      if (byte !== CLOSE_ARRAY && ++entries > limits.maxEntries) return 'too-many-entries';
    }
    switch (byte) {
      case QUOTE:
        i = closingQuote(json, i + 1);
        break;
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        if (++depth > limits.maxDepth) return 'too-deep';
        inArray[depth] = byte === OPEN_ARRAY ? 1 : 0;
        arrayOpened = byte === OPEN_ARRAY;
        break;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        if (depth > 0) depth--;
        break;
      case COLON:
        if (++entries > limits.maxEntries) return 'too-many-entries';
        break;
      case COMMA:
        if (inArray[depth] === 1 && ++entries > limits.maxEntries) return 'too-many-entries';
        break;
    }
  }
  return null;
}
