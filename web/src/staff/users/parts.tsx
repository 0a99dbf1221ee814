/** The pieces an account's console page is built of: its titled sections, facts and reasons. */
import { Card, Group, Text, Textarea, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { useI18n } from '../../i18n/i18n';

/**
 * A titled section the tests and screen readers find by its name. Not layout/DataTable's
 * `Section`: that one is an h2, and here the sections sit under the account's own h2.
 */
export function Section({
  id,
  title,
  children,
}: {
  id: string;
  title: string;
  children: ReactNode;
}) {
  return (
    <Card withBorder component="section" role="region" aria-labelledby={id}>
      <Title order={3} id={id} mb="xs">
        {title}
      </Title>
      {children}
    </Card>
  );
}

export function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Group gap="xs" wrap="nowrap" align="baseline">
      <Text size="sm" fw={600} style={{ flexShrink: 0 }}>
        {label}
      </Text>
      <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
        {children}
      </Text>
    </Group>
  );
}

/** Why staff do what they do, kept in the audit log (the service requires one). */
export function ReasonField({ value, onChange }: { value: string; onChange: (v: string) => void }) {
  const { t } = useI18n();
  return (
    <Textarea
      label={t('console.users.reason')}
      description={t('console.users.reasonHint')}
      value={value}
      onChange={(e) => onChange(e.currentTarget.value)}
      required
      maxLength={200}
      autosize
      minRows={2}
    />
  );
}
