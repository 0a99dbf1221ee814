import {
  Alert,
  Button,
  Checkbox,
  CopyButton,
  Divider,
  Modal,
  Paper,
  PasswordInput,
  Stack,
  Text,
  Textarea,
  Title,
} from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { Navigate, useNavigate } from 'react-router';
import { api, rememberSignIn } from '../api/client';
import { keys, useConfig, useMe } from '../api/hooks';
import { Loading } from '../layout/Loading';
import { useI18n } from '../i18n/i18n';
import { afterSignIn, landingAfterSignIn } from './after-sign-in';

/**
 * A new seed until its owner ticks "written down": kept in this tab's session storage only (never
 * sent anywhere), so a reload shows it again instead of losing the account for good.
 */
const UNCONFIRMED_SEED = 'vpn.unconfirmedSeed';

function storedSeed(): string | null {
  try {
    return sessionStorage.getItem(UNCONFIRMED_SEED);
  } catch {
    return null;
  }
}

function keepSeed(seed: string | null): void {
  try {
    if (seed === null) sessionStorage.removeItem(UNCONFIRMED_SEED);
    else sessionStorage.setItem(UNCONFIRMED_SEED, seed);
  } catch {
    // Storage turned off: the seed is shown once, as before.
  }
}

export function SignInPage() {
  const { t, errorText } = useI18n();
  const me = useMe();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [seed, setSeed] = useState('');
  const [shownSeed, setShownSeed] = useState<string | null>(storedSeed);
  const [wroteDown, setWroteDown] = useState(false);
  const [busy, setBusy] = useState<'create' | 'login' | null>(null);
  const [error, setError] = useState<string | null>(null);

  if (me.isPending) return <Loading />;
  if (me.data && shownSeed === null) return <Navigate to={landingAfterSignIn()} replace />;
  const buying = afterSignIn()?.plan;

  async function create() {
    setBusy('create');
    setError(null);
    try {
      const created = await api.createSeedAccount();
      keepSeed(created.seed);
      setShownSeed(created.seed);
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(null);
    }
  }

  async function login(event: FormEvent) {
    event.preventDefault();
    setBusy('login');
    setError(null);
    try {
      const session = await api.loginWithSeed({ seed: seed.trim() });
      await rememberSignIn(session.user);
      await navigate(landingAfterSignIn());
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(null);
    }
  }

  async function finish() {
    keepSeed(null);
    setShownSeed(null);
    await queryClient.invalidateQueries({ queryKey: keys.me });
    await navigate(landingAfterSignIn());
  }

  return (
    <Stack maw={480} mx="auto">
      <Title order={1}>{t('signIn.title')}</Title>
      {buying && (
        <Alert color="blue" role="status">
          {t('signIn.toBuy', { plan: buying })}
        </Alert>
      )}
      <Text>{t('signIn.intro')}</Text>
      {error && (
        <Alert color="red" role="alert">
          {error}
        </Alert>
      )}
      <Button onClick={() => void create()} loading={busy === 'create'} size="md">
        {t('signIn.create')}
      </Button>
      <Divider />
      <Paper component="form" onSubmit={(e) => void login(e)} withBorder p="md">
        <Stack>
          <PasswordInput
            label={t('signIn.seedLabel')}
            description={t('signIn.seedHint')}
            value={seed}
            onChange={(e) => setSeed(e.currentTarget.value)}
            required
            autoComplete="current-password"
          />
          <Button type="submit" variant="outline" loading={busy === 'login'}>
            {t('signIn.submit')}
          </Button>
        </Stack>
      </Paper>
      <TelegramLogin />

      <Modal
        opened={shownSeed !== null}
        onClose={() => undefined}
        withCloseButton={false}
        closeOnClickOutside={false}
        closeOnEscape={false}
        title={t('seed.title')}
      >
        <Stack>
          <Alert color="yellow">
            <Text fw={700}>{t('seed.writeDown')}</Text>
            <Text>{t('seed.once')}</Text>
          </Alert>
          <Textarea
            label={t('signIn.seedLabel')}
            value={shownSeed ?? ''}
            readOnly
            autosize
            styles={{ input: { fontFamily: 'monospace' } }}
          />
          <CopyButton value={shownSeed ?? ''}>
            {({ copied, copy }) => (
              <Button variant="light" onClick={copy}>
                {copied ? t('seed.copied') : t('seed.copy')}
              </Button>
            )}
          </CopyButton>
          <Checkbox
            label={t('seed.confirm')}
            checked={wroteDown}
            onChange={(e) => setWroteDown(e.currentTarget.checked)}
          />
          <Button disabled={!wroteDown} onClick={() => void finish()}>
            {t('seed.continue')}
          </Button>
        </Stack>
      </Modal>
    </Stack>
  );
}

/**
 * Telegram's login widget, when the service names a bot. It runs in redirect mode: Telegram sends
 * the browser to /telegram-login with the signed fields, so the page needs no inline script.
 */
function TelegramLogin() {
  const { t } = useI18n();
  const config = useConfig();
  const holder = useRef<HTMLDivElement>(null);
  const bot = config.data?.bot_username ?? null;

  useEffect(() => {
    const target = holder.current;
    if (!bot || !target) return;
    const script = document.createElement('script');
    script.async = true;
    script.src = 'https://telegram.org/js/telegram-widget.js?22';
    script.dataset.telegramLogin = bot;
    script.dataset.size = 'large';
    script.dataset.authUrl = `${window.location.origin}/telegram-login`;
    script.dataset.requestAccess = 'write';
    target.replaceChildren(script);
    return () => target.replaceChildren();
  }, [bot]);

  if (!bot) return null;
  return (
    <Stack gap="xs">
      <Text>{t('signIn.telegram')}</Text>
      <div ref={holder} />
    </Stack>
  );
}

const TELEGRAM_FIELDS = [
  'id',
  'first_name',
  'last_name',
  'username',
  'photo_url',
  'auth_date',
  'hash',
];

/** Where the widget sends the browser back: the fields are sent once, then leave the address bar. */
export function TelegramReturn() {
  const { t, errorText } = useI18n();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [error, setError] = useState<string | null>(null);
  const started = useRef(false);

  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const params = new URLSearchParams(window.location.search);
    window.history.replaceState(null, '', '/telegram-login');
    const fields: Record<string, string | number> = {};
    for (const name of TELEGRAM_FIELDS) {
      const value = params.get(name);
      if (value !== null)
        fields[name] = name === 'id' || name === 'auth_date' ? Number(value) : value;
    }
    api
      .loginWithTelegram(fields as unknown as Parameters<typeof api.loginWithTelegram>[0])
      .then(({ user }) => rememberSignIn(user))
      .then(() => navigate(landingAfterSignIn(), { replace: true }))
      .catch((failure: unknown) => setError(errorText(failure)));
  }, [navigate, queryClient, errorText]);

  if (!error) return <Loading />;
  return (
    <Alert color="red" role="alert">
      {t('signIn.telegramFailed')}: {error}
    </Alert>
  );
}
