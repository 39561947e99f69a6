/**
 * Usage of the customer's metered subscriptions this period, per meter: used, credits, balance, the
 * period's dates and the usage charge so far (before and with discount and tax), all from
 * /v1/customer-portal/customer-meters/. The table keeps its roles when a phone-width screen stacks it.
 */
import type { Page } from '../../api.ts';
import { Alert, Loading } from '../../components/ui.tsx';
import { formatDate, formatMoney, formatQuantity, formatUnitAmount } from '../../lib/format.ts';
import type { CustomerMeter } from '../../lib/types.ts';
import { isScopeError, usePortal, useResource } from './context.ts';

const METERS_PATH = '/v1/customer-portal/customer-meters/?limit=100&sorting=meter_name';

export function UsagePage() {
  return (
    <>
      <h1>Usage</h1>
      <p className="muted">What your usage-based prices have counted since the start of the current billing period.</p>
      <UsageSection />
    </>
  );
}

/** The usage table; `hideWhenEmpty` shows nothing at all when the customer has no metered price (subscriptions page). */
export function UsageSection({ hideWhenEmpty = false, heading }: { hideWhenEmpty?: boolean; heading?: string }) {
  const { session } = usePortal();
  const meters = useResource<Page<CustomerMeter>>(METERS_PATH);
  if (hideWhenEmpty && (!meters.data || meters.data.items.length === 0)) return null;
  const body = meters.error ? (
    session.scope === 'checkout' && isScopeError(meters.error) ? (
      <p className="muted">Sign in to see this.</p>
    ) : (
      <Alert>{meters.error.message}</Alert>
    )
  ) : !meters.data ? (
    <Loading label="Loading usage…" />
  ) : meters.data.items.length === 0 ? (
    <p className="muted">None of your subscriptions has a usage-based price, so there is no usage to show.</p>
  ) : (
    <UsageTable meters={meters.data.items} />
  );
  if (!heading) return body;
  return (
    <section aria-labelledby="usage-heading">
      <h2 id="usage-heading">{heading}</h2>
      {body}
    </section>
  );
}

function UsageTable({ meters }: { meters: CustomerMeter[] }) {
  return (
    <div className="table-wrap">
      <table className="table stack" role="table">
        <caption>Usage this billing period</caption>
        <thead role="rowgroup">
          <tr role="row">
            <th scope="col" role="columnheader">Meter</th>
            <th scope="col" role="columnheader">Used this period</th>
            <th scope="col" role="columnheader">Credits</th>
            <th scope="col" role="columnheader">Balance</th>
            <th scope="col" role="columnheader">Period</th>
            <th scope="col" role="columnheader">Estimated charge</th>
          </tr>
        </thead>
        <tbody role="rowgroup">
          {meters.map((m) => (
            <UsageRow key={m.id} m={m} />
          ))}
        </tbody>
      </table>
      <p className="muted small">
        Credits are used before anything is charged. A negative balance is the number of units that will be charged at the end of the
        period. The estimate grows with your usage until then.
      </p>
    </div>
  );
}

function UsageRow({ m }: { m: CustomerMeter }) {
  const withDiscountAndTax = m.amount - m.discount_amount + m.tax_amount;
  return (
    <tr role="row">
      <th scope="row" role="rowheader" data-label="Meter">
        {m.meter.name}
      </th>
      <td role="cell" data-label="Used this period">
        {formatQuantity(m.consumed_units)}
      </td>
      <td role="cell" data-label="Credits">
        {formatQuantity(m.credited_units)}
        {Number(m.credits_used) > 0 && <span className="muted small block">{formatQuantity(Number(m.credits_used))} used this period</span>}
      </td>
      <td role="cell" data-label="Balance">
        <span className={m.balance < 0 ? 'negative' : undefined}>{formatQuantity(m.balance)}</span>
      </td>
      <td role="cell" data-label="Period">
        {formatDate(m.period_start)} – {formatDate(m.period_end)}
      </td>
      <td role="cell" data-label="Estimated charge">
        <strong>{formatMoney(m.amount, m.currency)}</strong>
        <span className="muted small block">
          {formatQuantity(Number(m.billable_units))} × {formatUnitAmount(m.unit_amount, m.currency)}
          {m.cap_amount != null && `, capped at ${formatMoney(m.cap_amount, m.currency)}`}
        </span>
        {withDiscountAndTax !== m.amount && (
          <span className="muted small block">{formatMoney(withDiscountAndTax, m.currency)} with discount and tax</span>
        )}
        <span className="muted small block">Charged on {formatDate(m.period_end)}</span>
      </td>
    </tr>
  );
}
