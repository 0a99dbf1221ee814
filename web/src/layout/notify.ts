import { notifications } from '@mantine/notifications';
import { useCallback } from 'react';
import { useI18n } from '../i18n/i18n';

/** Shows a short message; its close button is named in the page's language. */
export function useNotify(): (message: string, color?: string) => void {
  const { t } = useI18n();
  return useCallback(
    (message, color) =>
      void notifications.show({
        message,
        color,
        closeButtonProps: { 'aria-label': t('common.close') },
      }),
    [t],
  );
}
