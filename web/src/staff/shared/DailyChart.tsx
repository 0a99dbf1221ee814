import { Card, Table, Text, Title, VisuallyHidden } from '@mantine/core';
import { useId } from 'react';
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { useI18n } from '../../i18n/i18n';

/** One day's figure: `date` is a UTC day (`YYYY-MM-DD`), `value` the figure as a number. */
export interface DailyPoint {
  date: string;
  value: number;
  /** The figure in words, exactly (money as the service sent it); `format(value)` when absent. */
  text?: string;
}

/**
 * A figure per day as a bar chart, in a section named by `title`. The picture is hidden from
 * screen readers: a caption sums it up and a visually hidden table holds every day's figure,
 * which is what assistive technology reads instead.
 */
export function DailyChart({
  title,
  points,
  format,
}: {
  title: string;
  points: DailyPoint[];
  format: (value: number) => string;
}) {
  const { t, date } = useI18n();
  const titleId = useId();
  const textOf = (point: DailyPoint) => point.text ?? format(point.value);
  const highest = points.reduce<DailyPoint | null>(
    (best, point) => (point.value > 0 && (!best || point.value > best.value) ? point : best),
    null,
  );
  const shortDate = (day: string) => day.slice(5);

  return (
    <Card withBorder component="section" aria-labelledby={titleId}>
      <Title order={3} size="h4" id={titleId} mb="xs">
        {title}
      </Title>
      <figure style={{ margin: 0 }}>
        <div aria-hidden="true" style={{ width: '100%', height: 180 }}>
          <ResponsiveContainer width="100%" height="100%">
            <BarChart data={points} accessibilityLayer={false}>
              <CartesianGrid strokeDasharray="3 3" vertical={false} />
              <XAxis dataKey="date" tickFormatter={shortDate} fontSize={11} minTickGap={12} />
              <YAxis tickFormatter={format} fontSize={11} width={72} allowDecimals={false} />
              <Tooltip
                formatter={(value) => format(Number(value))}
                labelFormatter={(label) => date(String(label))}
              />
              <Bar dataKey="value" fill="var(--mantine-color-blue-6)" isAnimationActive={false} />
            </BarChart>
          </ResponsiveContainer>
        </div>
        <Text component="figcaption" size="sm">
          {highest
            ? t('console.overview.chartSummary', {
                days: points.length,
                date: date(highest.date),
                value: textOf(highest),
              })
            : t('console.overview.chartEmpty', { days: points.length })}
        </Text>
        <VisuallyHidden>
          <Table>
            <caption>{title}</caption>
            <Table.Thead>
              <Table.Tr>
                <Table.Th scope="col">{t('console.overview.day')}</Table.Th>
                <Table.Th scope="col">{title}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {points.map((point) => (
                <Table.Tr key={point.date}>
                  <Table.Th scope="row">{point.date}</Table.Th>
                  <Table.Td>{textOf(point)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </VisuallyHidden>
      </figure>
    </Card>
  );
}
