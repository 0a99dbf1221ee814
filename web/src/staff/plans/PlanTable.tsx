/** Every plan in a table, each with its edit button and its activation or deactivation. */
import { Alert, Badge, Button, Card, Group, Table, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { useI18n } from '../../i18n/i18n';
import { ConfirmAction } from '../../layout/ConfirmAction';
import { bodyOf } from './planFields';
import { type Plan, useSavePlan } from './queries';

export function PlanTable({
  plans,
  onEdit,
  onDone,
}: {
  plans: Plan[];
  onEdit: (plan: Plan) => void;
  onDone: (message: string) => void;
}) {
  const { t, money, bytes, errorText } = useI18n();
  const save = useSavePlan();
  const [error, setError] = useState<string | null>(null);

  async function setActive(plan: Plan, active: boolean) {
    setError(null);
    await save.mutateAsync({ name: plan.name, body: bodyOf(plan, active) });
    onDone(
      t(active ? 'console.plans.activated' : 'console.plans.deactivated', { name: plan.name }),
    );
  }

  if (plans.length === 0) return <Text>{t('console.plans.none')}</Text>;
  return (
    <Card withBorder component="section" aria-labelledby="plans-list">
      <Title order={3} size="h4" id="plans-list" mb="xs">
        {t('console.plans.list')}
      </Title>
      {error && (
        <Alert color="red" role="alert" mb="xs">
          {error}
        </Alert>
      )}
      <Table.ScrollContainer minWidth={720}>
        <Table>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t('console.plans.name')}</Table.Th>
              <Table.Th>{t('console.plans.days')}</Table.Th>
              <Table.Th>{t('console.plans.traffic')}</Table.Th>
              <Table.Th>{t('console.plans.devices')}</Table.Th>
              <Table.Th>{t('console.plans.prices')}</Table.Th>
              <Table.Th>{t('console.plans.status')}</Table.Th>
              <Table.Th>{t('console.plans.actions')}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {plans.map((plan) => (
              <Table.Tr key={plan.name}>
                <Table.Th scope="row">{plan.name}</Table.Th>
                <Table.Td>{plan.duration_days}</Table.Td>
                <Table.Td>{bytes(plan.traffic_limit_bytes)}</Table.Td>
                <Table.Td>{plan.device_limit}</Table.Td>
                <Table.Td>
                  {Object.entries(plan.prices)
                    .sort(([a], [b]) => a.localeCompare(b))
                    .map(([code, amount]) => money(amount, code))
                    .join(', ')}
                </Table.Td>
                <Table.Td>
                  <Badge color={plan.active ? 'green' : 'gray'} variant="dot">
                    {t(plan.active ? 'console.plans.active' : 'console.plans.inactive')}
                  </Badge>
                </Table.Td>
                <Table.Td>
                  <Group gap="xs" wrap="nowrap">
                    <Button
                      variant="default"
                      size="xs"
                      onClick={() => onEdit(plan)}
                      aria-label={t('console.plans.editNamed', { name: plan.name })}
                    >
                      {t('console.plans.edit')}
                    </Button>
                    {plan.active ? (
                      <ConfirmAction
                        label={t('console.plans.deactivateNamed', { name: plan.name })}
                        question={t('console.plans.deactivateQuestion', { name: plan.name })}
                        action={() => setActive(plan, false)}
                      />
                    ) : (
                      <Button
                        size="xs"
                        variant="light"
                        color="green"
                        loading={save.isPending && save.variables?.name === plan.name}
                        onClick={() =>
                          void setActive(plan, true).catch((failure: unknown) =>
                            setError(errorText(failure)),
                          )
                        }
                      >
                        {t('console.plans.activateNamed', { name: plan.name })}
                      </Button>
                    )}
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </Card>
  );
}
