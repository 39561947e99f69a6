/** The receipt mail of a fulfilled checkout's order. */
import type { EntityManager } from '../../kit/db.ts';
import { Order } from './entities.ts';

/** The receipt mail of a fulfilled checkout. */
export interface Receipt {
  organizationId: string;
  recipient: string;
  subject: string;
  text: string;
}

/** The receipt mail for a fulfilled checkout, or null when there is nothing to send. */
export async function receiptFor(em: EntityManager, checkoutId: string): Promise<Receipt | null> {
  const order = await em.findOne(Order, { checkout: checkoutId }, { populate: ['customer', 'product', 'organization'] });
  return order ? receiptOf(order) : null;
}

/** The receipt of an order (its customer, product and organization loaded). */
export function receiptOf(order: Order): Receipt {
  const money = (n: number) => `${order.currency.toUpperCase()} ${(n / 100).toFixed(2)}`;
  const lines = [
    `Thank you for your purchase from ${order.organization.name}.`,
    '',
    `Product: ${order.product.name}${order.subscription ? ` (every ${order.product.recurringInterval})` : ''}`,
    `Subtotal: ${money(order.subtotalAmount)}`,
    ...(order.discountAmount ? [`Discount: -${money(order.discountAmount)}`] : []),
    ...(order.taxAmount ? [`Tax: ${money(order.taxAmount)}`] : []),
    `Total: ${money(order.totalAmount)}`,
    '',
    `Order id: ${order.id}`,
  ];
  return {
    organizationId: order.organization.id,
    recipient: order.customer.email,
    subject: `Your receipt from ${order.organization.name}: ${order.product.name}`,
    text: `${lines.join('\n')}\n`,
  };
}
