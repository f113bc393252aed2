import { writeCsvFile } from './csv-file.js';
import { seededRandom } from './random-values.js';
import { comment, field, money } from './star-schema.js';

/**
 * A CSV as a database export writes it (issue 27, part 4): order lines of a shop's database,
 * every amount money with two decimals (`12.30`, `-4.05`), ids, order and product codes,
 * dates and timestamps without zone, a status code, and a comment of 20–120 characters of
 * free text (commas and doubled quotes inside quotes) that is empty one time in five.
 */
export const EXPORT_HEADER =
  'line_id,order_code,ordered_at,ship_date,customer_id,sku,status,quantity,unit_price,discount,tax,net_amount,refund_amount,comment';

const STATUSES = ['SHIPPED', 'DELIVERED', 'DELIVERED', 'DELIVERED', 'RETURNED', 'CANCELLED', 'PENDING'];

export function writeExportCsv(file: string, targetBytes: number): number {
  const random = seededRandom(27);
  const start = Date.UTC(2022, 0, 1);
  return writeCsvFile(file, targetBytes, EXPORT_HEADER, (row) => {
    const orderedAt = start + Math.floor(random() * 3 * 365 * 86_400_000);
    const ordered = new Date(orderedAt).toISOString();
    const shipped = new Date(orderedAt + Math.floor(1 + random() * 6) * 86_400_000).toISOString();
    const quantity = 1 + Math.floor(random() * 6);
    const price = 2 + random() * 500;
    const discount = random() < 0.3 ? price * quantity * random() * 0.3 : 0;
    const tax = (price * quantity - discount) * 0.2;
    const net = price * quantity - discount + tax;
    const status = STATUSES[row % STATUSES.length] as string;
    const refund = status === 'RETURNED' ? money(-net) : '';
    const text = random() < 0.2 ? '' : field(comment(random));
    return `${row + 1},O-${String(1_000_000 + Math.floor(row / 3)).padStart(9, '0')},${ordered.slice(0, 19).replace('T', ' ')},${shipped.slice(0, 10)},${1 + Math.floor(random() * 300_000)},SKU-${String(Math.floor(random() * 25_000)).padStart(7, '0')},${status},${quantity},${money(price)},${money(discount)},${money(tax)},${money(net)},${refund},${text}`;
  });
}
