import { useEffect } from 'react';
import { PARTNER_CODE_PATTERN } from '../../../src/partners/partner-code-pattern';
import { useAttachPartner, useMe } from '../api/hooks';
import { useI18n } from '../i18n/i18n';
import { useNotify } from '../layout/notify';

/** Where this browser keeps a `?partner=` code until an account signs in. */
const PARTNER_KEY = 'partner-code';

/** A partner's two share links: the bot's (when its username is known) and the web app's. */
export function partnerShareLinks(
  code: string,
  botUsername: string | null | undefined,
  appOrigin: string,
): { bot: string | null; web: string } {
  const param = encodeURIComponent(code);
  return {
    bot: botUsername ? `https://t.me/${botUsername}?start=p_${param}` : null,
    web: `${appOrigin}/?partner=${param}`,
  };
}

/**
 * `<APP_URL>/?partner=<code>`, a partner's web link: the code leaves the address bar and is kept in
 * this browser; once an ordinary account is signed in (new or not) it is attached to that partner
 * through POST /users/me/partner, as the bot's `p_` link does (first wins), and forgotten.
 */
export function useRememberedPartner(): void {
  const me = useMe();
  const attach = useAttachPartner();
  const { t } = useI18n();
  const notify = useNotify();
  const { mutate } = attach;

  useEffect(() => {
    const url = new URL(window.location.href);
    const code = url.searchParams.get('partner');
    if (code === null) return;
    if (PARTNER_CODE_PATTERN.test(code)) localStorage.setItem(PARTNER_KEY, code);
    url.searchParams.delete('partner');
    window.history.replaceState(window.history.state, '', url.pathname + url.search + url.hash);
  }, []);

  const user = me.data;
  useEffect(() => {
    // Staff and partners sign in with a password to work, not as someone's buyers.
    if (!user || user.role !== null) return;
    const code = localStorage.getItem(PARTNER_KEY);
    if (code === null) return;
    localStorage.removeItem(PARTNER_KEY);
    // An unknown code, or an account that already has its partner, changes nothing: said by nobody.
    mutate({ partner_code: code }, { onSuccess: () => notify(t('account.partnerAttached')) });
  }, [user, mutate, notify, t]);
}
