import {
  Alert,
  Button,
  Code,
  Group,
  Paper,
  SimpleGrid,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { QrCode } from '../../connect/ConnectPanel';
import { useI18n } from '../../i18n/i18n';
import type { Schemas } from '../api';
import { secondFactorCalls, useRereadSecondFactor, useSecondFactorStatus } from './queries';

/**
 * The signed-in staff account's second factor: set it up (a QR code for the authenticator app,
 * confirmed by a first code, then the recovery codes, shown once), or turn it off with a code.
 */
export function SecurityPage() {
  const { t, errorText } = useI18n();
  const status = useSecondFactorStatus();
  const [setup, setSetup] = useState<Schemas['TotpSetupResponse'] | null>(null);
  const [code, setCode] = useState('');
  const [recovery, setRecovery] = useState<string[] | null>(null);
  const refresh = useRereadSecondFactor();

  const start = useMutation({
    mutationFn: secondFactorCalls.setUp,
    onSuccess: (made) => setSetup(made),
  });
  const enable = useMutation({
    mutationFn: () => secondFactorCalls.enable(code),
    onSuccess: (made) => {
      setRecovery(made.recovery_codes);
      setSetup(null);
      setCode('');
      void refresh();
    },
  });
  const disable = useMutation({
    mutationFn: () => secondFactorCalls.disable(code),
    onSuccess: () => {
      setCode('');
      setRecovery(null);
      void refresh();
    },
  });
  const failure = start.error ?? enable.error ?? disable.error;

  const codeField = (
    <TextInput
      label={t('console.security.code')}
      value={code}
      onChange={(e) => setCode(e.currentTarget.value.replace(/\D/g, '').slice(0, 6))}
      inputMode="numeric"
      autoComplete="one-time-code"
      required
    />
  );
  const submit = (action: () => void) => (event: FormEvent) => {
    event.preventDefault();
    action();
  };

  return (
    <Stack>
      <Title order={2}>{t('console.security.title')}</Title>
      <Text>{t('console.security.about')}</Text>
      {failure && (
        <Alert color="red" role="alert">
          {errorText(failure)}
        </Alert>
      )}
      {recovery && (
        <Paper withBorder p="md">
          <Stack>
            <Text fw={600}>{t('console.security.recoveryTitle')}</Text>
            <Text>{t('console.security.recoveryAbout')}</Text>
            <SimpleGrid cols={2} aria-label={t('console.security.recoveryTitle')}>
              {recovery.map((one) => (
                <Code key={one}>{one}</Code>
              ))}
            </SimpleGrid>
          </Stack>
        </Paper>
      )}
      {status.data?.enabled ? (
        <Paper component="form" withBorder p="md" onSubmit={submit(() => disable.mutate())}>
          <Stack>
            <Text>{t('console.security.on', { left: status.data.recovery_codes_left })}</Text>
            {codeField}
            <Group>
              <Button type="submit" color="red" loading={disable.isPending}>
                {t('console.security.turnOff')}
              </Button>
            </Group>
          </Stack>
        </Paper>
      ) : setup ? (
        <Paper component="form" withBorder p="md" onSubmit={submit(() => enable.mutate())}>
          <Stack>
            <Text>{t('console.security.scan')}</Text>
            <QrCode value={setup.otpauth_url} alt={t('console.security.qr')} />
            <Text size="sm">
              {t('console.security.orType')} <Code>{setup.secret}</Code>
            </Text>
            {codeField}
            <Group>
              <Button type="submit" loading={enable.isPending}>
                {t('console.security.enable')}
              </Button>
            </Group>
          </Stack>
        </Paper>
      ) : (
        status.data && (
          <Group>
            <Button onClick={() => start.mutate()} loading={start.isPending}>
              {t('console.security.setUp')}
            </Button>
          </Group>
        )
      )}
    </Stack>
  );
}
