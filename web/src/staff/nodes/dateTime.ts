/**
 * A moment with its time of day, in the page's language and in UTC (as the service's days are):
 * when a node was last checked or last reported, minutes matter.
 */
import { useCallback } from 'react';
import { useI18n } from '../../i18n/i18n';

export function useDateTime(): (iso: string | null) => string {
  const { language, t } = useI18n();
  return useCallback(
    (iso) => {
      if (iso === null) return t('console.nodes.never');
      const format = new Intl.DateTimeFormat(language === 'ru' ? 'ru-RU' : 'en-GB', {
        dateStyle: 'medium',
        timeStyle: 'medium',
        timeZone: 'UTC',
      });
      return `${format.format(new Date(iso))} UTC`;
    },
    [language, t],
  );
}
