import { isWellFormed, visibleTextProblem } from './visible-text';

describe('visible text, the one rule of human-entered fields', () => {
  it('takes text in any script, with emoji, accents and the joiners words and emoji use', () => {
    for (const text of [
      'support ticket 42',
      'Вернули 3 дня',
      'خطأ في الدفع',
      'می‌خواهم', // Persian with a zero-width non-joiner inside the word
      '👩‍💻 asked', // an emoji sequence made with a zero-width joiner
      '❤️ thanks', // a heart and its variation selector
      'Tiếng Việt', // two marks on one letter
      'e\u0301\u0302\u0303\u0304 four marks',
      '退款',
      '  padded  ',
    ]) {
      expect([text, visibleTextProblem(text)]).toEqual([text, null]);
    }
  });

  it('refuses what hides or reorders text, control characters, fillers and mark floods', () => {
    const refused: [text: string, problem: RegExp][] = [
      ['a\ud800b', /well-formed/],
      ['a\udc00b', /well-formed/],
      ['\ud83d', /well-formed/],
      ...[
        '\u202a',
        '\u202b',
        '\u202c',
        '\u202d',
        '\u202e',
        '\u2066',
        '\u2067',
        '\u2068',
        '\u2069',
      ].map((c): [string, RegExp] => [`acct-${c}24-tcca`, /direction-changing/]),
      ...['\u200b', '\u200e', '\u200f', '\u2060', '\ufeff', '\u00ad', '\u{e0041}'].map(
        (c): [string, RegExp] => [`zero${c}width`, /invisible/],
      ),
      ['\u200b', /invisible/],
      ...['\u3164', '\u115f', '\u1160', '\uffa0', '\u2800'].map((c): [string, RegExp] => [
        `filler${c}`,
        /invisible .*\(U\+/,
      ]),
      ['\u3164', /U\+3164/],
      ['bell\u0007', /control/],
      ['esc\u001b[31m', /control/],
      ['del\u007f', /control/],
      ['c1\u0085', /control/],
      ['two\nlines', /line breaks/],
      ['tab\there', /control/],
      ['cr\rhere', /control/],
      ['separator\u2028here', /control/],
      [`z${'\u0301'.repeat(5)}algo`, /more than 4 combining marks/],
      [`z${'\u0301\u200d'.repeat(3)}`, /more than 4 combining marks/],
      ['', /visible character/],
      ['   ', /visible character/],
      ['\u00a0\u3000', /visible character/],
      ['\u0301\u0301', /visible character/],
    ];
    for (const [text, problem] of refused) {
      expect([text, visibleTextProblem(text)]).toEqual([text, expect.stringMatching(problem)]);
    }
  });

  it('multi-line text takes line breaks and tabs, and nothing else of the control characters', () => {
    const lines = { lines: true };
    expect(visibleTextProblem('first\nsecond\r\n\tindented', lines)).toBeNull();
    for (const text of ['cr\ronly', 'bell\u0007', 'vt\u000b', '\n\n\t']) {
      expect([text, visibleTextProblem(text, lines)]).toEqual([text, expect.any(String)]);
    }
  });

  it('an identifier takes no joiners either', () => {
    expect(visibleTextProblem('ab\u200dcd')).toBeNull();
    expect(visibleTextProblem('ab\u200dcd', { joiners: false })).toMatch(/U\+200D/);
    expect(visibleTextProblem('ab\u200ccd', { joiners: false })).toMatch(/U\+200C/);
  });

  it('isWellFormed agrees with String.prototype.isWellFormed', () => {
    const native = (text: string): boolean =>
      (
        String.prototype as unknown as { isWellFormed: (this: string) => boolean }
      ).isWellFormed.call(text);
    for (const text of [
      '',
      'ok',
      '😀',
      'a\ud800',
      '\udc00a',
      '\ud83d\ude00\ud83d',
      '\udbff\udfff',
    ]) {
      expect([text, isWellFormed(text)]).toEqual([text, native(text)]);
    }
  });
});
