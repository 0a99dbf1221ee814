/** The parts of the plan form that hold several inputs: its names per language and its prices. */
import { ActionIcon, Button, Group, Stack, Text, TextInput } from '@mantine/core';
import type { Dispatch, SetStateAction } from 'react';
import { useI18n } from '../../i18n/i18n';
import { DISPLAY_LANGUAGES, type DisplayTexts } from './planFields';

/** One price as typed: a currency and a decimal amount; `key` keeps a row's inputs while editing. */
export interface PriceRow {
  key: number;
  currency: string;
  amount: string;
}

/** The plan's name and short description in each language, each optional. */
export function DisplayFields({
  texts: display,
  onChange: setDisplay,
  errors: invalid,
}: {
  texts: DisplayTexts;
  onChange: Dispatch<SetStateAction<DisplayTexts>>;
  errors: Record<string, string | undefined>;
}) {
  const { t } = useI18n();
  return (
    <fieldset style={{ border: 0, padding: 0, margin: 0 }}>
      <Text component="legend" fw={500} size="sm" mb={4}>
        {t('console.plans.display')}
      </Text>
      <Text size="xs" c="gray.7" mb={4}>
        {t('console.plans.displayHint')}
      </Text>
      <Stack gap="xs">
        {DISPLAY_LANGUAGES.map((language) =>
          (['name', 'description'] as const).map((part) => (
            <TextInput
              key={`${language}.${part}`}
              label={t(`console.plans.display.${language}.${part}`)}
              value={display[language][part]}
              onChange={(event) => {
                const value = event.currentTarget.value;
                setDisplay((texts) => ({
                  ...texts,
                  [language]: { ...texts[language], [part]: value },
                }));
              }}
              maxLength={part === 'name' ? 40 : 200}
              error={invalid[`display.${language}.${part}`]}
            />
          )),
        )}
      </Stack>
    </fieldset>
  );
}

/** The plan's prices, a row per currency: added, changed and removed in place. */
export function PriceFields({
  prices,
  onChange: setPrices,
  error,
}: {
  prices: PriceRow[];
  onChange: Dispatch<SetStateAction<PriceRow[]>>;
  error: string | undefined;
}) {
  const { t } = useI18n();

  function changePrice(key: number, change: Partial<PriceRow>) {
    setPrices((rows) => rows.map((row) => (row.key === key ? { ...row, ...change } : row)));
  }

  let nextKey = Math.max(-1, ...prices.map((row) => row.key)) + 1;
  return (
    <fieldset style={{ border: 0, padding: 0, margin: 0 }}>
      <Text component="legend" fw={500} size="sm" mb={4}>
        {t('console.plans.prices')}
      </Text>
      {error && (
        <Text size="sm" c="red" mb={4}>
          {error}
        </Text>
      )}
      <Stack gap="xs">
        {prices.map((row, index) => (
          <Group key={row.key} align="flex-end" wrap="nowrap">
            <TextInput
              label={t('console.plans.currency', { n: index + 1 })}
              value={row.currency}
              onChange={(event) =>
                changePrice(row.key, { currency: event.currentTarget.value.toUpperCase() })
              }
              maxLength={3}
              w={110}
            />
            <TextInput
              label={t('console.plans.amount', { n: index + 1 })}
              value={row.amount}
              onChange={(event) => changePrice(row.key, { amount: event.currentTarget.value })}
              inputMode="decimal"
              placeholder="4.99"
              style={{ flex: 1 }}
            />
            <ActionIcon
              variant="default"
              size="lg"
              aria-label={t('console.plans.removePrice', { n: index + 1 })}
              onClick={() => setPrices((rows) => rows.filter((other) => other.key !== row.key))}
            >
              ×
            </ActionIcon>
          </Group>
        ))}
        <Button
          variant="default"
          size="xs"
          w="fit-content"
          onClick={() =>
            setPrices((rows) => [...rows, { key: nextKey++, currency: '', amount: '' }])
          }
        >
          {t('console.plans.addPrice')}
        </Button>
      </Stack>
    </fieldset>
  );
}
