/**
 * A node's traffic per UTC day as a chart (bytes from and to users, stacked), with the totals of
 * the span in words for those who do not see the chart. The chart itself is reachable by keyboard
 * (recharts' accessibility layer: arrow keys move through the days' tooltips).
 */
import { Card, Group, SegmentedControl, Stack, Text, Title } from '@mantine/core';
import { useState } from 'react';
import {
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import { useI18n } from '../../i18n/i18n';
import { Failed, Loading } from '../../layout/Loading';
import { useNodeTraffic } from './queries';

const SPANS = ['7', '30', '90'] as const;

export function TrafficChart({ nodeId }: { nodeId: string }) {
  const { t, bytes } = useI18n();
  const [span, setSpan] = useState<(typeof SPANS)[number]>('30');
  const traffic = useNodeTraffic(nodeId, Number(span));
  const days = traffic.data?.days ?? [];
  const total = (pick: (day: (typeof days)[number]) => number) =>
    days.reduce((sum, day) => sum + pick(day), 0);

  return (
    <Card withBorder component="section" role="region" aria-labelledby="node-traffic-title">
      <Stack gap="sm">
        <Group justify="space-between">
          <Title order={2} size="h3" id="node-traffic-title">
            {t('console.nodes.traffic')}
          </Title>
          <SegmentedControl
            aria-label={t('console.nodes.trafficSpan')}
            value={span}
            onChange={(value) => setSpan(value as (typeof SPANS)[number])}
            data={SPANS.map((days) => ({
              value: days,
              label: t('console.nodes.trafficDays', { days }),
            }))}
          />
        </Group>
        {traffic.isPending && <Loading />}
        {traffic.isError && <Failed error={traffic.error} retry={() => void traffic.refetch()} />}
        {traffic.data && (
          <>
            <Text>
              {t('console.nodes.trafficTotals', {
                days: days.length,
                up: bytes(total((day) => day.bytes_up)),
                down: bytes(total((day) => day.bytes_down)),
                counted: bytes(total((day) => day.bytes_counted)),
              })}
            </Text>
            <div style={{ width: '100%', height: 260 }}>
              <ResponsiveContainer>
                <BarChart
                  data={days}
                  margin={{ left: 8, right: 8 }}
                  title={t('console.nodes.traffic')}
                  desc={t('console.nodes.trafficKeys')}
                >
                  <CartesianGrid strokeDasharray="3 3" />
                  <XAxis dataKey="date" tickFormatter={(date: string) => date.slice(5)} />
                  <YAxis tickFormatter={(value: number) => bytes(value)} width={84} />
                  <Tooltip formatter={(value) => bytes(Number(value))} />
                  <Legend />
                  <Bar
                    dataKey="bytes_down"
                    name={t('console.nodes.bytesDown')}
                    stackId="bytes"
                    fill="#228be6"
                    isAnimationActive={false}
                  />
                  <Bar
                    dataKey="bytes_up"
                    name={t('console.nodes.bytesUp')}
                    stackId="bytes"
                    fill="#12b886"
                    isAnimationActive={false}
                  />
                </BarChart>
              </ResponsiveContainer>
            </div>
          </>
        )}
      </Stack>
    </Card>
  );
}
