/** A plan as the console's form edits it: the service's rules for its fields, and its bodies. */
import type { Plan, PlanBody } from './queries';

/** The service's rule for plan names (PUT /admin/plans/{name}). */
export const PLAN_NAME = /^[a-z0-9_-]{1,32}$/;
export const CURRENCY = /^[A-Z]{3}$/;
/** Traffic limits are typed in GB of 1024³ bytes, as `bytes()` shows them. */
export const GB = 1024 ** 3;
/** The most devices a plan may allow (the service's rule; the least is 1). */
export const DEVICE_LIMIT_MAX = 20;
/** When a plan's used traffic starts again from zero (the contract's `traffic_reset`). */
export const TRAFFIC_RESETS = ['none', 'day', 'week', 'month', 'rolling_month'] as const;
export type TrafficReset = (typeof TRAFFIC_RESETS)[number];
/** The languages a plan has a display name in (the contract's `display`). */
export const DISPLAY_LANGUAGES = ['en', 'ru'] as const;
export type DisplayLanguage = (typeof DISPLAY_LANGUAGES)[number];
export type DisplayTexts = Record<DisplayLanguage, { name: string; description: string }>;
/** The form's fields, as the service names them in a validation failure. */
export const PLAN_FIELDS = [
  'name',
  'duration_days',
  'traffic_limit_bytes',
  'device_limit',
  'reset_day',
  'on_hold_max_days',
  'prices',
  ...DISPLAY_LANGUAGES.flatMap((language) => [
    `display.${language}.name`,
    `display.${language}.description`,
  ]),
];

export function bodyOf(plan: Plan, active: boolean): PlanBody {
  return {
    duration_days: plan.duration_days,
    traffic_limit_bytes: plan.traffic_limit_bytes,
    prices: plan.prices,
    device_limit: plan.device_limit,
    traffic_reset: plan.traffic_reset,
    reset_day: plan.reset_day,
    starts: plan.starts,
    on_hold_max_days: plan.on_hold_max_days,
    display: plan.display,
    active,
  };
}

/** The plan's display texts as the form edits them: empty strings where it has none. */
export function displayOf(plan?: Plan): DisplayTexts {
  const texts = (language: DisplayLanguage) => ({
    name: plan?.display[language]?.name ?? '',
    description: plan?.display[language]?.description ?? '',
  });
  return { en: texts('en'), ru: texts('ru') };
}

/** The form's display texts as sent: the languages with a name, without empty descriptions. */
export function displayBody(texts: DisplayTexts): NonNullable<PlanBody['display']> {
  const body: NonNullable<PlanBody['display']> = {};
  for (const language of DISPLAY_LANGUAGES) {
    const name = texts[language].name.trim();
    const description = texts[language].description.trim();
    if (name) body[language] = description ? { name, description } : { name };
  }
  return body;
}
