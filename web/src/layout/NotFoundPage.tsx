import { Anchor, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router';
import { useI18n } from '../i18n/i18n';

/** An address the app has no page for: said so, with the way home (not a silent redirect). */
export function NotFoundPage() {
  const { t } = useI18n();
  return (
    <Stack maw={480}>
      <Title order={1}>{t('notFound.title')}</Title>
      <Text>{t('notFound.text')}</Text>
      <Anchor component={Link} to="/">
        {t('notFound.home')}
      </Anchor>
    </Stack>
  );
}
