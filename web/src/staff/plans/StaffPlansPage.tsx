import { Button, Group, Modal, Stack, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { useI18n } from '../../i18n/i18n';
import { Failed, Loading } from '../../layout/Loading';
import { PlanForm } from './PlanForm';
import { PlanTable } from './PlanTable';
import { type Plan, useStaffPlans } from './queries';

/** Every plan (staff guard), on sale or not; creating, editing, activating and deactivating. */
export function StaffPlansPage() {
  const { t } = useI18n();
  const plans = useStaffPlans();
  const [editing, setEditing] = useState<Plan | null>(null);
  const [creating, setCreating] = useState(false);
  // What the last change did, in words, beside the list (a toast would cover the console's tabs).
  const [done, setDone] = useState('');

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>{t('console.plans.title')}</Title>
        <Button onClick={() => setCreating(true)}>{t('console.plans.new')}</Button>
      </Group>
      {plans.isPending && <Loading />}
      {plans.isError && <Failed error={plans.error} retry={() => void plans.refetch()} />}
      <Text role="status">{done}</Text>
      {plans.data && (
        <PlanTable plans={plans.data} onEdit={(plan) => setEditing(plan)} onDone={setDone} />
      )}
      <Modal
        opened={creating}
        onClose={() => setCreating(false)}
        title={t('console.plans.new')}
        closeButtonProps={{ 'aria-label': t('common.close') }}
        size="lg"
      >
        <PlanForm
          existing={plans.data ?? []}
          onSaved={(message) => {
            setDone(message);
            setCreating(false);
          }}
        />
      </Modal>
      <Modal
        opened={editing !== null}
        onClose={() => setEditing(null)}
        title={editing ? t('console.plans.editTitle', { name: editing.name }) : ''}
        closeButtonProps={{ 'aria-label': t('common.close') }}
        size="lg"
      >
        {editing && (
          <PlanForm
            plan={editing}
            existing={plans.data ?? []}
            onSaved={(message) => {
              setDone(message);
              setEditing(null);
            }}
          />
        )}
      </Modal>
    </Stack>
  );
}
