import { Alert, Button, Paper, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { Navigate } from 'react-router';
import { api, rememberSignIn } from '../api/client';
import { isStaffRole, useMe } from '../api/hooks';
import { useI18n } from '../i18n/i18n';
import { Loading } from '../layout/Loading';
import { Console } from './Console';

/**
 * The staff area under /staff, loaded as its own chunk. It signs staff in with a username and
 * password, checks the role, and shows the console (./Console, pages listed in ./pages).
 */
export default function StaffArea() {
  const { t } = useI18n();
  const me = useMe();
  if (me.isPending) return <Loading />;
  const user = me.data;
  if (!user) return <StaffSignIn />;
  // Partners sign in here too, and work on their own page.
  if (user.role === 'partner') return <Navigate to="/syndicate" replace />;
  if (!isStaffRole(user.role)) {
    return (
      <Stack>
        <Title order={1}>{t('staff.title')}</Title>
        <Text>{t('staff.notStaff')}</Text>
      </Stack>
    );
  }
  return <Console user={user} />;
}

function StaffSignIn() {
  const { t, errorText } = useI18n();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  // Shown once the service says the account signs in with a second factor.
  const [askCode, setAskCode] = useState(false);
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const factor = code.trim();
      const session = await api.adminLogin({
        username: username.trim(),
        password,
        ...(!factor
          ? {}
          : /^\d{6}$/.test(factor)
            ? { totp_code: factor }
            : { recovery_code: factor }),
      });
      await rememberSignIn(session.user);
    } catch (failure) {
      const codeOf = (failure as { code?: unknown }).code;
      if (codeOf === 'TOTP_REQUIRED' || codeOf === 'TOTP_INVALID') setAskCode(true);
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Stack maw={420} mx="auto">
      <Title order={1}>{t('staff.signIn')}</Title>
      <Paper component="form" withBorder p="md" onSubmit={(e) => void submit(e)}>
        <Stack>
          <TextInput
            label={t('staff.username')}
            value={username}
            onChange={(e) => setUsername(e.currentTarget.value)}
            required
            autoComplete="username"
          />
          <PasswordInput
            label={t('staff.password')}
            value={password}
            onChange={(e) => setPassword(e.currentTarget.value)}
            required
            autoComplete="current-password"
          />
          {askCode && (
            <TextInput
              label={t('staff.totpCode')}
              value={code}
              onChange={(e) => setCode(e.currentTarget.value)}
              autoComplete="one-time-code"
              required
              autoFocus
            />
          )}
          {error && (
            <Alert color="red" role="alert">
              {error}
            </Alert>
          )}
          <Button type="submit" loading={busy}>
            {t('staff.submit')}
          </Button>
        </Stack>
      </Paper>
    </Stack>
  );
}
