import { Alert, Button, Center, Loader, Stack, VisuallyHidden } from '@mantine/core';
import { useI18n } from '../i18n/i18n';

export function Loading() {
  const { t } = useI18n();
  return (
    <Center p="xl" role="status">
      <Loader />
      <VisuallyHidden>{t('common.loading')}</VisuallyHidden>
    </Center>
  );
}

/** A query that failed, in words, with a way to ask again. */
export function Failed({ error, retry }: { error: unknown; retry?: () => void }) {
  const { t, errorText } = useI18n();
  return (
    <Alert color="red" role="alert">
      <Stack gap="xs" align="flex-start">
        {errorText(error)}
        {retry && (
          <Button size="xs" variant="white" onClick={retry}>
            {t('common.retry')}
          </Button>
        )}
      </Stack>
    </Alert>
  );
}
