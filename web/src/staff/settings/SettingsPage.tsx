import { Alert, Button, Card, Group, NumberInput, Stack, Text, Title } from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { useI18n } from '../../i18n/i18n';
import { useSaveDefaultTrafficLimit } from './queries';

/** Limits are typed in GB of 1024³ bytes, as `bytes()` shows them. */
const GB = 1024 ** 3;

/**
 * The service's settings staff may change (staff guard): the default traffic limit of accounts
 * without their own. The service has no route that reads the default, so the page shows the
 * value the service answered after a save.
 */
export function SettingsPage() {
  const { t, bytes, errorText } = useI18n();
  const [limitGb, setLimitGb] = useState<number | string>('');
  const [problem, setProblem] = useState<string | null>(null);
  const save = useSaveDefaultTrafficLimit();

  function submit(event: FormEvent) {
    event.preventDefault();
    setProblem(null);
    if (typeof limitGb !== 'number' || limitGb <= 0) {
      setProblem(t('console.settings.badLimit'));
      return;
    }
    save.mutate(Math.round(limitGb * GB));
  }

  return (
    <Stack maw={640}>
      <Title order={2}>{t('console.settings.title')}</Title>
      <Card withBorder component="section" aria-labelledby="settings-traffic">
        <Title order={3} size="h4" id="settings-traffic" mb="xs">
          {t('console.settings.trafficTitle')}
        </Title>
        <form onSubmit={submit} noValidate>
          <Stack>
            <Text size="sm">{t('console.settings.trafficAbout')}</Text>
            <Text size="sm" role="status">
              {save.data
                ? t('console.settings.current', {
                    value: bytes(save.data.default_bytes),
                    bytes: save.data.default_bytes,
                  })
                : t('console.settings.unknown')}
            </Text>
            <NumberInput
              label={t('console.settings.newLimit')}
              value={limitGb}
              onChange={setLimitGb}
              min={0}
              decimalScale={3}
              required
            />
            {(problem ?? save.error) && (
              <Alert color="red" role="alert">
                {problem ?? errorText(save.error)}
              </Alert>
            )}
            <Group justify="flex-end">
              <Button type="submit" loading={save.isPending}>
                {t('console.settings.save')}
              </Button>
            </Group>
          </Stack>
        </form>
      </Card>
    </Stack>
  );
}
