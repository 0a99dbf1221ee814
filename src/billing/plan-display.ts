/** The languages a plan can be named in: those of the web app and the bot. */
export const DISPLAY_LANGUAGES = ['en', 'ru'] as const;
export type DisplayLanguage = (typeof DISPLAY_LANGUAGES)[number];

/** A plan's name and short description in one language. */
export interface PlanDisplayText {
  name: string;
  description?: string;
}

export type PlanDisplayTexts = Partial<Record<DisplayLanguage, PlanDisplayText>>;

/** The plan's name in `language`, else its slug: what a buyer reads. */
export function planTitle(
  plan: { name: string; display: PlanDisplayTexts },
  language: DisplayLanguage,
): string {
  return plan.display[language]?.name ?? plan.name;
}

/** The same texts whatever the order of their keys (jsonb keeps its own order). */
export function sameDisplay(a: PlanDisplayTexts, b: PlanDisplayTexts): boolean {
  return DISPLAY_LANGUAGES.every(
    (language) =>
      a[language]?.name === b[language]?.name &&
      a[language]?.description === b[language]?.description,
  );
}
