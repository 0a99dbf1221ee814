/** The forms changing an account's subscription and traffic limit, each with its own refusal. */
import { Alert, Button, Group, NumberInput, Stack, TextInput, Title } from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { useI18n } from '../../i18n/i18n';
import { ReasonField } from './parts';
import { type StaffUser, type UserChange, userActions } from './queries';

const GIB = 1024 ** 3;

/** Adds days to the subscription (or takes them away), with the reason kept in the audit log. */
export function MoveSubscription({ user, change }: { user: StaffUser; change: UserChange }) {
  const { t, errorText } = useI18n();
  const [days, setDays] = useState<string | number>(30);
  const [planName, setPlanName] = useState('');
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const running = user.subscription?.active ?? false;

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await change(() =>
        userActions(user.id).moveSubscription({
          days: Number(days),
          reason,
          ...(!running && planName.trim() !== '' ? { plan_name: planName.trim() } : {}),
        }),
      );
      setReason('');
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={(e) => void submit(e)} aria-labelledby="move-subscription">
      <Stack gap="xs" maw={640}>
        <Title order={4} id="move-subscription">
          {t('console.users.moveTitle')}
        </Title>
        <Group align="flex-start" grow>
          <NumberInput
            label={t('console.users.days')}
            description={t('console.users.daysHint')}
            value={days}
            onChange={setDays}
            min={-3650}
            max={3650}
            allowDecimal={false}
            required
          />
          {!running && (
            <TextInput
              label={t('console.users.planName')}
              description={t('console.users.planNameHint')}
              value={planName}
              onChange={(e) => setPlanName(e.currentTarget.value)}
              maxLength={32}
            />
          )}
        </Group>
        <ReasonField value={reason} onChange={setReason} />
        {error && (
          <Alert color="red" role="alert">
            {error}
          </Alert>
        )}
        <Button type="submit" loading={busy} w="fit-content">
          {t('console.users.moveSubmit')}
        </Button>
      </Stack>
    </form>
  );
}

/** The account's own traffic limit in GB, or back to the default one. */
export function TrafficLimit({ user, change }: { user: StaffUser; change: UserChange }) {
  const { t, errorText } = useI18n();
  const [gigabytes, setGigabytes] = useState<string | number>('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function save(limit: number | null) {
    setBusy(true);
    setError(null);
    try {
      await change(() => userActions(user.id).setTrafficLimit(limit));
      setGigabytes('');
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    void save(gigabytes === '' ? null : Math.round(Number(gigabytes) * GIB));
  }

  return (
    <form onSubmit={submit} aria-labelledby="traffic-limit">
      <Stack gap="xs">
        <Title order={4} id="traffic-limit">
          {t('console.users.limitTitle')}
        </Title>
        <Group align="flex-end">
          <NumberInput
            label={t('console.users.limitGb')}
            value={gigabytes}
            onChange={setGigabytes}
            min={0.01}
            decimalScale={2}
            required
          />
          <Button type="submit" loading={busy}>
            {t('console.users.limitSave')}
          </Button>
          <Button variant="default" disabled={busy} onClick={() => void save(null)}>
            {t('console.users.limitDefault')}
          </Button>
        </Group>
        {error && (
          <Alert color="red" role="alert">
            {error}
          </Alert>
        )}
      </Stack>
    </form>
  );
}
