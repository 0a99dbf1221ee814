import { type ReactNode, useEffect } from 'react';
import type { MessageKey } from '../i18n/en';
import { useI18n } from '../i18n/i18n';

/**
 * The tab's title while a page is shown ("Account — VPN"), in the page's language: tabs, history
 * and bookmarks tell the pages apart.
 */
export function Titled({ title, children }: { title: MessageKey; children: ReactNode }) {
  const { t } = useI18n();
  const text = `${t(title)} — ${t('app.name')}`;
  useEffect(() => {
    document.title = text;
  }, [text]);
  return children;
}
