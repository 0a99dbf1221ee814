import { ValidateBy } from 'class-validator';

/** A letter, digit, punctuation mark or symbol (emoji included): something a reader sees. */
const VISIBLE = /[\p{L}\p{N}\p{P}\p{S}]/u;
/** Unicode format characters: bidirectional controls, zero-width characters, soft hyphens. */
const FORMAT = /\p{Cf}/u;
/**
 * The same, except the zero-width non-joiner and joiner: Persian and Indic scripts write them
 * inside words and emoji sequences are made with them, and they change no text's direction.
 */
const FORMAT_BUT_JOINERS = /(?![\u200C\u200D])\p{Cf}/u;

/**
 * Text that reads as it is: at least one visible character, and no format characters that hide
 * text or reorder it (a right-to-left override makes `acct-\u202E24-tcca` read `acct-acct-42`).
 * `joiners` lets the zero-width (non-)joiner through, for free text; an identifier takes none.
 */
export function IsVisibleText(options: { joiners: boolean }): PropertyDecorator {
  const format = options.joiners ? FORMAT_BUT_JOINERS : FORMAT;
  return ValidateBy({
    name: 'isVisibleText',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'string' && VISIBLE.test(value) && !format.test(value),
      defaultMessage: () =>
        'must contain visible text and no invisible or direction-changing format characters',
    },
  });
}
