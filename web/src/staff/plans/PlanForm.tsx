/** The form creating a plan or changing one, checked as the service checks it before it is sent. */
import { Alert, Button, Group, NumberInput, Select, Stack, Switch, TextInput } from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { decimalToMinor, useI18n } from '../../i18n/i18n';
import { minorToDecimal } from '../../i18n/money';
import {
  CURRENCY,
  DEVICE_LIMIT_MAX,
  DISPLAY_LANGUAGES,
  type DisplayTexts,
  displayBody,
  displayOf,
  GB,
  PLAN_FIELDS,
  PLAN_NAME,
  TRAFFIC_RESETS,
  type TrafficReset,
} from './planFields';
import { DisplayFields, type PriceRow, PriceFields } from './PlanFieldsets';
import { type Plan, type PlanBody, useSavePlan } from './queries';

/**
 * A plan's fields: name (new plans only), duration, traffic limit, prices typed as decimals of
 * their currency and sent as minor units, and whether it is on sale.
 */
export function PlanForm({
  plan,
  existing,
  onSaved,
}: {
  plan?: Plan;
  existing: Plan[];
  onSaved: (message: string) => void;
}) {
  const { t, errorText, fieldErrors } = useI18n();
  const save = useSavePlan();
  const [name, setName] = useState(plan?.name ?? '');
  const [display, setDisplay] = useState<DisplayTexts>(() => displayOf(plan));
  // The service's refusal: its field problems show at their inputs.
  const [failure, setFailure] = useState<unknown>(null);
  const invalid = fieldErrors(failure);
  const [days, setDays] = useState<number | string>(plan?.duration_days ?? 30);
  const [limitGb, setLimitGb] = useState<number | string>(
    plan ? plan.traffic_limit_bytes / GB : 100,
  );
  // Empty for a new plan: the service gives it its DEVICE_LIMIT_DEFAULT.
  const [devices, setDevices] = useState<number | string>(plan?.device_limit ?? '');
  const [reset, setReset] = useState<TrafficReset>(plan?.traffic_reset ?? 'none');
  const [resetDay, setResetDay] = useState<number | string>(plan?.reset_day ?? 1);
  const [firstUse, setFirstUse] = useState(plan?.starts === 'on_first_use');
  const [holdDays, setHoldDays] = useState<number | string>(plan?.on_hold_max_days ?? 30);
  const [active, setActive] = useState(plan?.active ?? true);
  const [prices, setPrices] = useState<PriceRow[]>(
    plan
      ? Object.entries(plan.prices).map(([currency, amount], key) => ({
          key,
          currency,
          amount: minorToDecimal(amount, currency),
        }))
      : [{ key: 0, currency: 'USD', amount: '' }],
  );
  const [error, setError] = useState<string | null>(null);

  /** The body to send, or the first problem in words. */
  function checked(): { body: PlanBody } | { problem: string } {
    if (!plan && !PLAN_NAME.test(name)) return { problem: t('console.plans.badName') };
    if (!plan && existing.some((other) => other.name === name))
      return { problem: t('console.plans.nameTaken', { name }) };
    if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > 3650)
      return { problem: t('console.plans.badDays') };
    if (typeof limitGb !== 'number' || limitGb < 0) return { problem: t('console.plans.badLimit') };
    const noDevices = devices === '' && !plan;
    if (
      !noDevices &&
      (typeof devices !== 'number' ||
        !Number.isInteger(devices) ||
        devices < 1 ||
        devices > DEVICE_LIMIT_MAX)
    )
      return { problem: t('console.plans.badDevices') };
    if (
      reset === 'month' &&
      (typeof resetDay !== 'number' || !Number.isInteger(resetDay) || resetDay < 1 || resetDay > 28)
    )
      return { problem: t('console.plans.badResetDay') };
    if (
      firstUse &&
      (typeof holdDays !== 'number' ||
        !Number.isInteger(holdDays) ||
        holdDays < 1 ||
        holdDays > 365)
    )
      return { problem: t('console.plans.badHoldDays') };
    if (DISPLAY_LANGUAGES.some((l) => display[l].description.trim() && !display[l].name.trim()))
      return { problem: t('console.plans.descriptionWithoutName') };
    if (prices.length === 0) return { problem: t('console.plans.noPrices') };
    const map: Record<string, string> = {};
    for (const row of prices) {
      const currency = row.currency.trim().toUpperCase();
      if (!CURRENCY.test(currency)) return { problem: t('console.plans.badCurrency') };
      if (currency in map) return { problem: t('console.plans.twice', { currency }) };
      const minor = decimalToMinor(row.amount, currency);
      if (minor === null) return { problem: t('console.plans.badPrice', { currency }) };
      map[currency] = minor;
    }
    return {
      body: {
        duration_days: days,
        traffic_limit_bytes: Math.round(limitGb * GB),
        prices: map,
        ...(typeof devices === 'number' ? { device_limit: devices } : {}),
        traffic_reset: reset,
        ...(reset === 'month' && typeof resetDay === 'number' ? { reset_day: resetDay } : {}),
        starts: firstUse ? 'on_first_use' : 'on_purchase',
        ...(firstUse && typeof holdDays === 'number' ? { on_hold_max_days: holdDays } : {}),
        display: displayBody(display),
        active,
      },
    };
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(null);
    setFailure(null);
    const result = checked();
    if ('problem' in result) {
      setError(result.problem);
      return;
    }
    try {
      const saved = await save.mutateAsync({ name: plan?.name ?? name, body: result.body });
      onSaved(t('console.plans.saved', { name: saved.name }));
    } catch (refused) {
      setFailure(refused);
      setError(errorText(refused, PLAN_FIELDS));
    }
  }

  return (
    <form onSubmit={(event) => void submit(event)} noValidate>
      <Stack>
        {!plan && (
          <TextInput
            label={t('console.plans.name')}
            description={t('console.plans.nameHint')}
            value={name}
            onChange={(event) => setName(event.currentTarget.value.trim())}
            required
            error={invalid.name}
          />
        )}
        <NumberInput
          label={t('console.plans.days')}
          value={days}
          onChange={setDays}
          min={1}
          max={3650}
          allowDecimal={false}
          required
          error={invalid.duration_days}
        />
        <NumberInput
          label={t('console.plans.trafficGb')}
          description={t('console.plans.trafficHint')}
          value={limitGb}
          onChange={setLimitGb}
          min={0}
          decimalScale={3}
          required
          error={invalid.traffic_limit_bytes}
        />
        <NumberInput
          label={t('console.plans.devices')}
          description={t('console.plans.devicesHint')}
          value={devices}
          onChange={setDevices}
          min={1}
          max={DEVICE_LIMIT_MAX}
          allowDecimal={false}
          required={plan !== undefined}
          error={invalid.device_limit}
        />
        <Select
          label={t('console.plans.reset')}
          data={TRAFFIC_RESETS.map((value) => ({
            value,
            label: t(`console.plans.reset.${value}`),
          }))}
          value={reset}
          onChange={(value) => setReset((value as TrafficReset | null) ?? 'none')}
          allowDeselect={false}
        />
        {reset === 'month' && (
          <NumberInput
            label={t('console.plans.resetDay')}
            value={resetDay}
            onChange={setResetDay}
            min={1}
            max={28}
            allowDecimal={false}
            required
            error={invalid.reset_day}
          />
        )}
        <Switch
          label={t('console.plans.firstUse')}
          checked={firstUse}
          onChange={(event) => setFirstUse(event.currentTarget.checked)}
        />
        {firstUse && (
          <NumberInput
            label={t('console.plans.holdDays')}
            value={holdDays}
            onChange={setHoldDays}
            min={1}
            max={365}
            allowDecimal={false}
            required
            error={invalid.on_hold_max_days}
          />
        )}
        <DisplayFields texts={display} onChange={setDisplay} errors={invalid} />
        <PriceFields prices={prices} onChange={setPrices} error={invalid.prices} />
        <Switch
          label={t('console.plans.onSale')}
          checked={active}
          onChange={(event) => setActive(event.currentTarget.checked)}
        />
        {error && (
          <Alert color="red" role="alert">
            {error}
          </Alert>
        )}
        <Group justify="flex-end">
          <Button type="submit" loading={save.isPending}>
            {t('console.plans.save')}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
