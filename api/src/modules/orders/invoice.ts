/**
 * PDF invoices of orders. One invoice per order, rendered on the first request with `pdfkit` and kept
 * in the private bucket of the object store (`invoices/<organization_id>/<order_id>.pdf`); later
 * requests reuse the stored file. Callers get a presigned, time-limited download URL.
 *
 * Streams are left uncompressed so the text of an invoice (names, amounts) can be searched in the
 * raw file; invoices are small either way.
 */
import PDFDocument from 'pdfkit';
import type { Storage } from '../../kit/storage.ts';
import type { BillingAddress } from '../customers/entities.ts';
import type { Order } from './entities.ts';

/** How long an invoice URL stays valid. */
export const INVOICE_URL_TTL_SECONDS = 3600;

/** Populate these (besides ORDER_POPULATE's) before rendering. */
export const INVOICE_POPULATE = ['organization', 'customer', 'product', 'productPrice', 'discount'] as const;

export function invoiceKey(order: Pick<Order, 'id'> & { organization: { id: string } }): string {
  return `invoices/${order.organization.id}/${order.id}.pdf`;
}

/** Decimal places of a currency (2 for USD and EUR, 0 for JPY, 3 for KWD), from the ICU data. */
export function currencyDigits(currency: string): number {
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency: currency.toUpperCase() }).resolvedOptions()
      .maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

/** An amount in minor units as text: `formatMoney(2500, 'usd')` → `$25.00`, `formatMoney(-500, 'eur')` → `-€5.00`. */
export function formatMoney(minor: number, currency: string): string {
  const code = currency.toUpperCase();
  const digits = currencyDigits(code);
  const major = minor / 10 ** digits;
  try {
    return new Intl.NumberFormat('en-US', {
      style: 'currency',
      currency: code,
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    }).format(major);
  } catch {
    return `${major.toFixed(digits)} ${code}`;
  }
}

function addressLines(a: BillingAddress | null | undefined): string[] {
  if (!a) return [];
  const cityLine = [a.postal_code, a.city, a.state].filter(Boolean).join(' ');
  return [a.line1, a.line2, cityLine, a.country].filter((l): l is string => !!l && l.trim() !== '');
}

const BILLING_REASON_LABEL: Record<Order['billingReason'], string> = {
  purchase: 'One-time purchase',
  subscription_create: 'Subscription',
  subscription_cycle: 'Subscription renewal',
  subscription_update: 'Subscription change',
};

/** Invoice number shown on the document: stable per order. */
export function invoiceNumber(order: Pick<Order, 'id' | 'createdAt'>): string {
  const d = order.createdAt;
  const ymd = `${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}${String(d.getUTCDate()).padStart(2, '0')}`;
  return `INV-${ymd}-${order.id.replace(/-/g, '').slice(0, 8).toUpperCase()}`;
}

/** Renders the invoice of an order (INVOICE_POPULATE loaded) as a PDF. */
export function renderInvoicePdf(order: Order): Promise<Buffer> {
  const doc = new PDFDocument({
    size: 'A4',
    margin: 50,
    compress: false,
    info: { Title: `Invoice ${invoiceNumber(order)}`, Author: order.organization.name },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  const money = (v: number) => formatMoney(v, order.currency);
  const org = order.organization;
  const customer = order.customer;
  const left = 50;
  const right = doc.page.width - 50;
  const width = right - left;

  // Header: seller and invoice details.
  doc.font('Helvetica-Bold').fontSize(22).text('Invoice', left, 50);
  doc.font('Helvetica').fontSize(10);
  doc.text(`Invoice number: ${invoiceNumber(order)}`, left, 80);
  doc.text(`Date of issue: ${order.createdAt.toISOString().slice(0, 10)}`);
  doc.text(`Order: ${order.id}`);
  doc.text(`Status: ${order.status.replace('_', ' ')}`);

  const top = 150;
  const half = { width: width / 2 - 10 };
  doc.font('Helvetica-Bold').fontSize(11).text('From', left, top, half);
  doc.font('Helvetica').fontSize(10).text(org.name, left, top + 16, half);
  for (const line of [org.billingEmail ?? org.email, org.website].filter((l): l is string => !!l)) doc.text(line, left, undefined, half);
  const fromBottom = doc.y;

  const billTo = left + width / 2;
  doc.font('Helvetica-Bold').fontSize(11).text('Bill to', billTo, top, half);
  doc.font('Helvetica').fontSize(10).text(customer.name || customer.email, billTo, top + 16, half);
  if (customer.name) doc.text(customer.email, billTo, undefined, half);
  for (const line of addressLines(order.billingAddress ?? customer.billingAddress)) doc.text(line, billTo, undefined, half);
  if (customer.taxId?.[0]) {
    doc.text(`Tax ID: ${customer.taxId[0]}${customer.taxId[1] ? ` (${customer.taxId[1]})` : ''}`, billTo, undefined, half);
  }

  // Line items.
  let y = Math.max(290, fromBottom + 30, doc.y + 30);
  const col = { desc: left, qty: left + width * 0.6, amount: left + width * 0.75 };
  const amountWidth = right - col.amount;
  doc.font('Helvetica-Bold').fontSize(10);
  doc.text('Description', col.desc, y);
  doc.text('Qty', col.qty, y);
  doc.text('Amount', col.amount, y, { width: amountWidth, align: 'right' });
  y += 16;
  doc.moveTo(left, y).lineTo(right, y).stroke();
  y += 8;
  doc.font('Helvetica').fontSize(10);
  doc.text(order.product.name, col.desc, y, { width: width * 0.55 });
  doc.text('1', col.qty, y);
  doc.text(money(order.subtotalAmount), col.amount, y, { width: amountWidth, align: 'right' });
  y = Math.max(doc.y, y + 14);
  doc.fillColor('#555555').text(BILLING_REASON_LABEL[order.billingReason], col.desc, y, { width: width * 0.55 });
  doc.fillColor('black');
  y = doc.y + 12;
  doc.moveTo(left, y).lineTo(right, y).stroke();
  y += 10;

  // Totals.
  const totals: [string, string, boolean][] = [['Subtotal', money(order.subtotalAmount), false]];
  if (order.discountAmount > 0 || order.discount) {
    const label = order.discount ? `Discount (${order.discount.name})` : 'Discount';
    totals.push([label, money(-order.discountAmount), false]);
  }
  totals.push(['Net amount', money(order.netAmount), false]);
  totals.push(['Tax', money(order.taxAmount), false]);
  totals.push(['Total', money(order.totalAmount), true]);
  if (order.refundedAmount > 0 || order.refundedTaxAmount > 0) {
    totals.push(['Refunded', money(-(order.refundedAmount + order.refundedTaxAmount)), false]);
  }
  const labelX = left + width * 0.45;
  for (const [label, value, bold] of totals) {
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(bold ? 12 : 10);
    doc.text(label, labelX, y);
    doc.text(value, col.amount, y, { width: amountWidth, align: 'right' });
    y += bold ? 20 : 16;
  }

  doc.font('Helvetica').fontSize(9).fillColor('#555555');
  doc.text(`Amounts in ${order.currency.toUpperCase()}.`, left, y + 20);
  doc.end();
  return done;
}

async function exists(storage: Storage, key: string): Promise<boolean> {
  try {
    await storage.client.statObject(storage.bucket, key);
    return true;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'NotFound' || code === 'NoSuchKey') return false;
    throw err;
  }
}

/**
 * The invoice URL of an order (INVOICE_POPULATE loaded): renders and stores the PDF on the first
 * call, then only signs a new URL.
 */
export async function invoiceUrl(storage: Storage, order: Order): Promise<string> {
  const key = invoiceKey(order);
  if (!(await exists(storage, key))) {
    await storage.put(storage.bucket, key, await renderInvoicePdf(order), 'application/pdf');
  }
  return storage.presignedGet(storage.bucket, key, INVOICE_URL_TTL_SECONDS);
}
