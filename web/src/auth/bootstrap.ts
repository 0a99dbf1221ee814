import { useEffect, useState } from 'react';
import { api, rememberSignIn } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { useNotify } from '../layout/notify';

/** The exchange of this page load: a token is single use, so it is never sent twice. */
let exchange: Promise<unknown> | null = null;

/**
 * `?bootstrap=<token>` (the bot's links): the token leaves the address bar and the history entry
 * at once, then is exchanged for session cookies. Returns true while the exchange runs.
 */
export function useBootstrapExchange(): boolean {
  const [token] = useState(() => new URL(window.location.href).searchParams.get('bootstrap'));
  const [running, setRunning] = useState(token !== null);
  const { errorText } = useI18n();
  const notify = useNotify();

  useEffect(() => {
    if (token === null) return;
    const url = new URL(window.location.href);
    url.searchParams.delete('bootstrap');
    window.history.replaceState(window.history.state, '', url.pathname + url.search + url.hash);
    exchange ??= api
      .exchangeBootstrap({ bootstrap_token: token })
      .then(({ user }) => rememberSignIn(user))
      .catch((error: unknown) => notify(errorText(error), 'red'));
    void exchange.finally(() => setRunning(false));
  }, [token, errorText, notify]);

  return running;
}
