import { ValidateBy } from 'class-validator';

/**
 * The one rule for text people type and other people read (reasons in the audit log, ticket
 * subjects and messages, payout destinations and references, names): it must read as it is
 * stored. Machine values (codes, ids, passwords, search terms) have rules of their own.
 */
export interface VisibleTextKind {
  /** Line breaks and tabs are allowed (a ticket's message); otherwise one line (a reason). */
  lines?: boolean;
  /**
   * The zero-width non-joiner and joiner are allowed (the default): Persian and Indic scripts
   * write them inside words and emoji sequences are made with them. An identifier takes none.
   */
  joiners?: boolean;
}

/** Whether `text` has no unpaired surrogate: UTF-8, and so PostgreSQL, cannot hold one. */
export function isWellFormed(text: string): boolean {
  // String.prototype.isWellFormed is ES2024, past this project's TypeScript lib; in Unicode mode
  // a surrogate half matches \p{Cs} only when it is unpaired.
  return !UNPAIRED_SURROGATE.test(text);
}

const UNPAIRED_SURROGATE = /\p{Cs}/u;

/** A letter, digit, punctuation mark or symbol (emoji included): something a reader sees. */
const VISIBLE = /[\p{L}\p{N}\p{P}\p{S}]/u;
/**
 * Letters and symbols that draw nothing: the Hangul fillers (U+115F, U+1160, U+3164, U+FFA0,
 * used for "invisible" names), the Khmer inherent vowels (U+17B4, U+17B5) and the blank Braille
 * pattern (U+2800).
 */
// An alternation, not a class: U+1160 after U+115F would read as one combined character.
const FILLER = /\u115F|\u1160|\u17B4|\u17B5|\u2800|\u3164|\uFFA0/u;
/**
 * Format characters: bidirectional embeddings, overrides and isolates (U+202A-202E, U+2066-2069),
 * marks (U+200E, U+200F, U+061C), zero-width space (U+200B), word joiner (U+2060), byte order
 * mark (U+FEFF), soft hyphen, tag characters; with or without the two joiners.
 */
const FORMAT = /\p{Cf}/u;
const FORMAT_BUT_JOINERS = /(?![\u200C\u200D])\p{Cf}/u;
/** Control characters, and the line and paragraph separators, on one line. */
const CONTROL_IN_LINE = /[\p{Cc}\u2028\u2029]/u;
/** Control characters but tab, line feed and a carriage return before a line feed. */
const CONTROL_IN_LINES = /(?![\t\n]|\r\n)\p{Cc}/u;
/** Marks stacked on one character: no script needs five, "zalgo" text stacks dozens. */
export const MAX_MARKS_IN_A_ROW = 4;
const MARK_FLOOD = new RegExp(`[\\p{M}\\u200C\\u200D]{${MAX_MARKS_IN_A_ROW + 1},}`, 'u');

/** Why `text` is not visible text of `kind` ("must …"), or null when it is. */
export function visibleTextProblem(text: string, kind: VisibleTextKind = {}): string | null {
  const { lines = false, joiners = true } = kind;
  if (!isWellFormed(text)) return WELL_FORMED_MESSAGE;
  const hidden = (joiners ? FORMAT_BUT_JOINERS : FORMAT).exec(text) ?? FILLER.exec(text);
  if (hidden) {
    return `must not contain invisible or direction-changing characters (${codePoint(hidden[0])})`;
  }
  const control = (lines ? CONTROL_IN_LINES : CONTROL_IN_LINE).exec(text);
  if (control) {
    return `must not contain control characters${lines ? '' : ' or line breaks'} (${codePoint(control[0])})`;
  }
  if (MARK_FLOOD.test(text)) {
    return `must not stack more than ${MAX_MARKS_IN_A_ROW} combining marks on one character`;
  }
  if (!VISIBLE.test(text)) return 'must contain a visible character';
  return null;
}

export const WELL_FORMED_MESSAGE = 'must be well-formed Unicode text (no unpaired surrogate)';

function codePoint(character: string): string {
  return `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** A string field that is visible text of `kind`; the answer names what is wrong with it. */
export function IsVisibleText(kind: VisibleTextKind = {}): PropertyDecorator {
  return ValidateBy({
    name: 'isVisibleText',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'string' && visibleTextProblem(value, kind) === null,
      defaultMessage: (args) =>
        (typeof args?.value === 'string' && visibleTextProblem(args.value, kind)) || 'must be text',
    },
  });
}
