import {
  ActionIcon,
  Alert,
  Badge,
  Button,
  Card,
  Group,
  Modal,
  NumberInput,
  Select,
  Stack,
  Switch,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { decimalToMinor, useI18n } from '../../i18n/i18n';
import { minorToDecimal } from '../../i18n/money';
import { Failed, Loading } from '../../layout/Loading';
import { ConfirmAction } from '../../layout/ConfirmAction';
import { type Plan, type PlanBody, useSavePlan, useStaffPlans } from './queries';

/** The service's rule for plan names (PUT /admin/plans/{name}). */
const PLAN_NAME = /^[a-z0-9_-]{1,32}$/;
const CURRENCY = /^[A-Z]{3}$/;
/** Traffic limits are typed in GB of 1024³ bytes, as `bytes()` shows them. */
const GB = 1024 ** 3;
/** The most devices a plan may allow (the service's rule; the least is 1). */
const DEVICE_LIMIT_MAX = 20;
/** When a plan's used traffic starts again from zero (the contract's `traffic_reset`). */
const TRAFFIC_RESETS = ['none', 'day', 'week', 'month', 'rolling_month'] as const;
type TrafficReset = (typeof TRAFFIC_RESETS)[number];
/** The languages a plan has a display name in (the contract's `display`). */
const DISPLAY_LANGUAGES = ['en', 'ru'] as const;
type DisplayLanguage = (typeof DISPLAY_LANGUAGES)[number];
type DisplayTexts = Record<DisplayLanguage, { name: string; description: string }>;
/** The form's fields, as the service names them in a validation failure. */
const PLAN_FIELDS = [
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

/** Every plan (staff guard), on sale or not; creating, editing, activating and deactivating. */
export function StaffPlansPage() {
  const { t } = useI18n();
  const plans = useStaffPlans();
  const [editing, setEditing] = useState<Plan | null>(null);
  const [creating, setCreating] = useState(false);
  // What the last change did, in words, beside the list (a toast would cover the console's tabs).
  const [done, setDone] = useState('');

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>{t('console.plans.title')}</Title>
        <Button onClick={() => setCreating(true)}>{t('console.plans.new')}</Button>
      </Group>
      {plans.isPending && <Loading />}
      {plans.isError && <Failed error={plans.error} retry={() => void plans.refetch()} />}
      <Text role="status">{done}</Text>
      {plans.data && (
        <PlanTable plans={plans.data} onEdit={(plan) => setEditing(plan)} onDone={setDone} />
      )}
      <Modal
        opened={creating}
        onClose={() => setCreating(false)}
        title={t('console.plans.new')}
        closeButtonProps={{ 'aria-label': t('common.close') }}
        size="lg"
      >
        <PlanForm
          existing={plans.data ?? []}
          onSaved={(message) => {
            setDone(message);
            setCreating(false);
          }}
        />
      </Modal>
      <Modal
        opened={editing !== null}
        onClose={() => setEditing(null)}
        title={editing ? t('console.plans.editTitle', { name: editing.name }) : ''}
        closeButtonProps={{ 'aria-label': t('common.close') }}
        size="lg"
      >
        {editing && (
          <PlanForm
            plan={editing}
            existing={plans.data ?? []}
            onSaved={(message) => {
              setDone(message);
              setEditing(null);
            }}
          />
        )}
      </Modal>
    </Stack>
  );
}

function bodyOf(plan: Plan, active: boolean): PlanBody {
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
function displayOf(plan?: Plan): DisplayTexts {
  const texts = (language: DisplayLanguage) => ({
    name: plan?.display[language]?.name ?? '',
    description: plan?.display[language]?.description ?? '',
  });
  return { en: texts('en'), ru: texts('ru') };
}

/** The form's display texts as sent: the languages with a name, without empty descriptions. */
function displayBody(texts: DisplayTexts): NonNullable<PlanBody['display']> {
  const body: NonNullable<PlanBody['display']> = {};
  for (const language of DISPLAY_LANGUAGES) {
    const name = texts[language].name.trim();
    const description = texts[language].description.trim();
    if (name) body[language] = description ? { name, description } : { name };
  }
  return body;
}

function PlanTable({
  plans,
  onEdit,
  onDone,
}: {
  plans: Plan[];
  onEdit: (plan: Plan) => void;
  onDone: (message: string) => void;
}) {
  const { t, money, bytes, errorText } = useI18n();
  const save = useSavePlan();
  const [error, setError] = useState<string | null>(null);

  async function setActive(plan: Plan, active: boolean) {
    setError(null);
    await save.mutateAsync({ name: plan.name, body: bodyOf(plan, active) });
    onDone(
      t(active ? 'console.plans.activated' : 'console.plans.deactivated', { name: plan.name }),
    );
  }

  if (plans.length === 0) return <Text>{t('console.plans.none')}</Text>;
  return (
    <Card withBorder component="section" aria-labelledby="plans-list">
      <Title order={3} size="h4" id="plans-list" mb="xs">
        {t('console.plans.list')}
      </Title>
      {error && (
        <Alert color="red" role="alert" mb="xs">
          {error}
        </Alert>
      )}
      <Table.ScrollContainer minWidth={720}>
        <Table>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t('console.plans.name')}</Table.Th>
              <Table.Th>{t('console.plans.days')}</Table.Th>
              <Table.Th>{t('console.plans.traffic')}</Table.Th>
              <Table.Th>{t('console.plans.devices')}</Table.Th>
              <Table.Th>{t('console.plans.prices')}</Table.Th>
              <Table.Th>{t('console.plans.status')}</Table.Th>
              <Table.Th>{t('console.plans.actions')}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {plans.map((plan) => (
              <Table.Tr key={plan.name}>
                <Table.Th scope="row">{plan.name}</Table.Th>
                <Table.Td>{plan.duration_days}</Table.Td>
                <Table.Td>{bytes(plan.traffic_limit_bytes)}</Table.Td>
                <Table.Td>{plan.device_limit}</Table.Td>
                <Table.Td>
                  {Object.entries(plan.prices)
                    .sort(([a], [b]) => a.localeCompare(b))
                    .map(([code, amount]) => money(amount, code))
                    .join(', ')}
                </Table.Td>
                <Table.Td>
                  <Badge color={plan.active ? 'green' : 'gray'} variant="dot">
                    {t(plan.active ? 'console.plans.active' : 'console.plans.inactive')}
                  </Badge>
                </Table.Td>
                <Table.Td>
                  <Group gap="xs" wrap="nowrap">
                    <Button
                      variant="default"
                      size="xs"
                      onClick={() => onEdit(plan)}
                      aria-label={t('console.plans.editNamed', { name: plan.name })}
                    >
                      {t('console.plans.edit')}
                    </Button>
                    {plan.active ? (
                      <ConfirmAction
                        label={t('console.plans.deactivateNamed', { name: plan.name })}
                        question={t('console.plans.deactivateQuestion', { name: plan.name })}
                        action={() => setActive(plan, false)}
                      />
                    ) : (
                      <Button
                        size="xs"
                        variant="light"
                        color="green"
                        loading={save.isPending && save.variables?.name === plan.name}
                        onClick={() =>
                          void setActive(plan, true).catch((failure: unknown) =>
                            setError(errorText(failure)),
                          )
                        }
                      >
                        {t('console.plans.activateNamed', { name: plan.name })}
                      </Button>
                    )}
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </Card>
  );
}

interface PriceRow {
  key: number;
  currency: string;
  amount: string;
}

/**
 * A plan's fields: name (new plans only), duration, traffic limit, prices typed as decimals of
 * their currency and sent as minor units, and whether it is on sale.
 */
function PlanForm({
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

  function changePrice(key: number, change: Partial<PriceRow>) {
    setPrices((rows) => rows.map((row) => (row.key === key ? { ...row, ...change } : row)));
  }

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

  let nextKey = Math.max(-1, ...prices.map((row) => row.key)) + 1;
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
        <fieldset style={{ border: 0, padding: 0, margin: 0 }}>
          <Text component="legend" fw={500} size="sm" mb={4}>
            {t('console.plans.display')}
          </Text>
          <Text size="xs" c="dimmed" mb={4}>
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
        <fieldset style={{ border: 0, padding: 0, margin: 0 }}>
          <Text component="legend" fw={500} size="sm" mb={4}>
            {t('console.plans.prices')}
          </Text>
          {invalid.prices && (
            <Text size="sm" c="red" mb={4}>
              {invalid.prices}
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
