import fs from 'node:fs';
import path from 'node:path';

/**
 * A retail data team's star schema as a database export writes it (issue 27): one fact table
 * of sales lines, a second fact of returns, and five dimensions. Money always with two
 * decimals (`12.30`), dates `YYYY-MM-DD`, timestamps `YYYY-MM-DD HH:MM:SS`, codes (`SKU-0001234`,
 * `EMEA`), free text with commas and quotes (names, descriptions, comments of 20–120
 * characters), NULLs as empty fields. Deterministic: the same bytes on every machine and run.
 */

export interface StarTable {
  /** The upload's table name (stored as `dataset_<name>`). */
  name: string;
  /** The CSV files holding its rows, each with the header line, each under the upload limit. */
  files: string[];
  rows: number;
  /**
   * Columns to create the table with before its files are inserted (the create operation), for
   * a table larger than one upload may carry; undefined: uploaded, its types inferred.
   */
  schema?: { name: string; type: string; nullable: boolean }[];
}

const DAY_MS = 86_400_000;
const FIRST_DAY = Date.UTC(2022, 0, 1);
const DAYS = 1096; // 2022-01-01 … 2024-12-31

const REGIONS: Record<string, string[]> = {
  EMEA: ['FR', 'DE', 'IT', 'ES', 'GB', 'NL', 'SE', 'PL', 'AE', 'ZA'],
  NA: ['US', 'CA', 'MX'],
  APAC: ['JP', 'AU', 'SG', 'IN', 'KR'],
  LATAM: ['BR', 'AR', 'CL', 'CO'],
};
const COUNTRIES = Object.values(REGIONS).flat();
const CITIES = [
  'North',
  'South',
  'Harbour',
  'Central',
  'Old Town',
  'Airport',
  'Riverside',
  'Mall',
  'Station',
];
const CATEGORIES: Record<string, string[]> = {
  Electronics: ['Audio', 'Phones', 'Computers', 'Cameras', 'Accessories'],
  Home: ['Kitchen', 'Furniture', 'Lighting', 'Decor', 'Bedding'],
  Garden: ['Tools', 'Plants', 'Outdoor furniture', 'Irrigation'],
  Sports: ['Running', 'Cycling', 'Fitness', 'Camping', 'Team sports'],
  Toys: ['Puzzles', 'Building sets', 'Dolls', 'Outdoor toys'],
  Books: ['Fiction', 'Non-fiction', 'Children', 'Comics'],
  Beauty: ['Skin care', 'Hair care', 'Fragrance', 'Make-up'],
  Grocery: ['Coffee', 'Tea', 'Snacks', 'Wine', 'Pantry'],
  Fashion: ['Shoes', 'Bags', 'Jackets', 'Shirts', 'Watches'],
  Office: ['Paper', 'Pens', 'Desks', 'Printers'],
  Pets: ['Dog', 'Cat', 'Aquarium', 'Bird'],
  Automotive: ['Care', 'Parts', 'Electronics', 'Tyres'],
};
const CATEGORY_NAMES = Object.keys(CATEGORIES);
const ADJECTIVES = [
  'Wireless',
  'Compact',
  'Premium',
  'Classic',
  'Ergonomic',
  'Smart',
  'Organic',
  'Vintage',
  'Portable',
  'Deluxe',
  'Eco',
  'Pro',
];
const NOUNS = [
  'Speaker',
  'Lamp',
  'Chair',
  'Kettle',
  'Backpack',
  'Mouse',
  'Jacket',
  'Puzzle',
  'Bottle',
  'Watch',
  'Blender',
  'Tent',
  'Notebook',
  'Brush',
];
const FIRST_NAMES = [
  'Anna',
  'Bruno',
  'Chloé',
  'Dmitri',
  'Elif',
  'Farah',
  'Giulia',
  'Hiro',
  'Ines',
  'Jonas',
  'Kwame',
  'Lena',
  'Mateo',
  'Nadia',
  'Omar',
  'Priya',
  'Quinn',
  'Rosa',
  'Sven',
  'Tariq',
  'Uma',
  'Viktor',
  'Wen',
  'Yara',
  'Zoe',
];
const LAST_NAMES = [
  'Müller',
  "O'Brien",
  'Dubois',
  'Rossi',
  'García',
  'Nowak',
  'Smith',
  'Tanaka',
  'Kim',
  'Silva',
  'Okafor',
  'Johansson',
  'Novak',
  'Haddad',
  'Sato',
  'Larsen',
  'Costa',
  'Weber',
];
const SEGMENTS = ['consumer', 'corporate', 'small_business'];
const TIERS = ['bronze', 'silver', 'gold', 'platinum'];
const CHANNELS = ['store', 'store', 'store', 'web', 'web', 'mobile', 'phone'];
const REASONS = ['DAMAGED', 'WRONG_ITEM', 'NOT_AS_DESCRIBED', 'CHANGED_MIND', 'LATE_DELIVERY'];
const WORDS = [
  'box',
  'arrived',
  'broken',
  'colour',
  'smaller',
  'than',
  'expected',
  'works',
  'fine',
  'but',
  'the',
  'strap',
  'is',
  'loose',
  'customer',
  'says',
  'screen',
  'scratched',
  'no',
  'manual',
  'ordered',
  'twice',
  'by',
  'mistake',
  'gift',
  'not',
  'wanted',
  'late',
];
const SEASONS = ['SUMMER', 'WINTER', 'SPRING', 'AUTUMN', 'BLACKFRIDAY', 'WELCOME', 'LOYALTY'];

export const STAR_SIZES = {
  sales: 5_000_000,
  customers: 300_000,
  products: 25_000,
  stores: 600,
  promotions: 400,
  returnsShare: 0.05,
};

/**
 * mulberry32: 32-bit state, full period, fast. (random-values.ts's generator multiplies past
 * 2^53 and falls into short cycles: drawn over millions of rows it gave 1,050 distinct customers
 * of 300,000.)
 */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');
export const money = (value: number) => value.toFixed(2);
const day = (index: number) => new Date(FIRST_DAY + index * DAY_MS).toISOString().slice(0, 10);
const timestamp = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
/** A CSV field, quoted when it must be (a comma, a quote or a line break), quotes doubled. */
export const field = (text: string) => (/[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);
const pick = <T>(random: () => number, items: readonly T[]): T =>
  items[Math.floor(random() * items.length)] as T;

/** Free text of 20–120 characters, sometimes with commas and quotes. */
export function comment(random: () => number): string {
  const length = 20 + Math.floor(random() * 100);
  let text = '';
  while (text.length < length) {
    const word = pick(random, WORDS);
    const r = random();
    text += text ? (r < 0.08 ? ', ' : ' ') : '';
    text += r > 0.95 ? `"${word}"` : word;
  }
  return text.slice(0, length).trimEnd();
}

/**
 * Writes a table's rows into files of at most `partBytes` each (every file with the header):
 * a data team's export cut to fit the upload limit.
 */
function writeTable(
  dir: string,
  name: string,
  header: string,
  rows: number,
  line: (index: number) => string,
  partBytes: number,
): StarTable {
  const files: string[] = [];
  let fd = -1;
  let written = 0;
  let batch = '';
  let batchBytes = 0;
  const open = () => {
    const file = path.join(dir, `${name}.${files.length + 1}.csv`);
    files.push(file);
    fd = fs.openSync(file, 'w');
    fs.writeSync(fd, `${header}\n`);
    written = Buffer.byteLength(header) + 1;
  };
  const flush = () => {
    fs.writeSync(fd, batch);
    written += batchBytes;
    batch = '';
    batchBytes = 0;
  };
  open();
  for (let i = 0; i < rows; i++) {
    const text = `${line(i)}\n`;
    const bytes = Buffer.byteLength(text);
    if (written + batchBytes + bytes > partBytes) {
      flush();
      fs.closeSync(fd);
      open();
    }
    batch += text;
    batchBytes += bytes;
    if (batchBytes > 1 << 20) flush();
  }
  flush();
  fs.closeSync(fd);
  return { name, files, rows };
}

function calendar(dir: string, partBytes: number): StarTable {
  const names = [
    'January',
    'February',
    'March',
    'April',
    'May',
    'June',
    'July',
    'August',
    'September',
    'October',
    'November',
    'December',
  ];
  const weekdays = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  return writeTable(
    dir,
    'calendar',
    'date_key,year,quarter,month,month_name,day_of_week,is_weekend,is_holiday',
    DAYS,
    (i) => {
      const d = new Date(FIRST_DAY + i * DAY_MS);
      const month = d.getUTCMonth();
      const weekday = d.getUTCDay();
      const holiday = (month === 11 && d.getUTCDate() >= 24) || (month === 0 && d.getUTCDate() === 1);
      return `${day(i)},${d.getUTCFullYear()},${Math.floor(month / 3) + 1},${month + 1},${names[month]},${weekdays[weekday]},${weekday === 0 || weekday === 6},${holiday}`;
    },
    partBytes,
  );
}

function stores(dir: string, partBytes: number): StarTable {
  const random = seededRandom(11);
  const regions = Object.keys(REGIONS);
  return writeTable(
    dir,
    'stores',
    'store_id,store_code,name,city,region,country,opened_on,floor_sqm,manager',
    STAR_SIZES.stores,
    (i) => {
      const region = regions[i % regions.length] as string;
      const country = pick(random, REGIONS[region] as string[]);
      const city = `${country} ${pick(random, CITIES)}`;
      const manager = `${pick(random, FIRST_NAMES)} ${pick(random, LAST_NAMES)}`;
      return `${i + 1},ST-${pad(i + 1, 4)},${field(`${city} store #${i + 1}, ${pick(random, ['flagship', 'outlet', 'express'])}`)},${field(city)},${region},${country},${day(-Math.floor(random() * 3000))},${200 + Math.floor(random() * 4800)},${field(manager)}`;
    },
    partBytes,
  );
}

function products(dir: string, partBytes: number): StarTable {
  const random = seededRandom(23);
  return writeTable(
    dir,
    'products',
    'product_id,sku,name,category,subcategory,brand,list_price,unit_cost,launched_on,discontinued,description',
    STAR_SIZES.products,
    (i) => {
      const category = CATEGORY_NAMES[i % CATEGORY_NAMES.length] as string;
      const sub = pick(random, CATEGORIES[category] as string[]);
      const price = 2 + random() * random() * 1500;
      const name = `${pick(random, ADJECTIVES)} ${pick(random, NOUNS)} ${String.fromCharCode(65 + (i % 26))}-${i % 997}`;
      return `${i + 1},SKU-${pad(i + 1, 7)},${field(name)},${category},${field(sub)},Brand ${pad(i % 150, 3)},${money(price)},${money(price * (0.4 + random() * 0.4))},${day(Math.floor(random() * 1000))},${random() < 0.08},${field(comment(random))}`;
    },
    partBytes,
  );
}

function customers(dir: string, partBytes: number): StarTable {
  const random = seededRandom(37);
  return writeTable(
    dir,
    'customers',
    'customer_id,customer_code,first_name,last_name,email,segment,country,city,signup_at,birth_date,loyalty_tier',
    STAR_SIZES.customers,
    (i) => {
      const first = pick(random, FIRST_NAMES);
      const last = pick(random, LAST_NAMES);
      const country = pick(random, COUNTRIES);
      const birth = random() < 0.15 ? '' : day(-Math.floor(7000 + random() * 20000));
      const signup = FIRST_DAY - 400 * DAY_MS + Math.floor(random() * (DAYS + 300) * DAY_MS);
      const email = `${first}.${last}.${i}@example.com`.toLowerCase().replace(/[^a-z0-9.@]/g, '');
      return `${i + 1},C${pad(i + 1, 9)},${field(first)},${field(last)},${email},${pick(random, SEGMENTS)},${country},${field(`${country} ${pick(random, CITIES)}`)},${timestamp(signup)},${birth},${pick(random, TIERS)}`;
    },
    partBytes,
  );
}

function promotions(dir: string, partBytes: number): StarTable {
  const random = seededRandom(41);
  return writeTable(
    dir,
    'promotions',
    'promo_id,promo_code,name,discount_pct,starts_on,ends_on,channel',
    STAR_SIZES.promotions,
    (i) => {
      const season = SEASONS[i % SEASONS.length] as string;
      const start = Math.floor(random() * (DAYS - 30));
      const pct = 5 + Math.floor(random() * 8) * 5;
      return `${i + 1},${season}${22 + (i % 3)}-${pct}-${pad(i, 3)},${field(`${season.toLowerCase()} sale: ${pct}% off, "${pick(random, ADJECTIVES)}" range`)},${money(pct)},${day(start)},${day(start + 7 + Math.floor(random() * 30))},${pick(random, ['all', 'web', 'store'])}`;
    },
    partBytes,
  );
}

/** Sales lines in time order, orders of 1–5 lines; popular products and loyal customers sell more. */
function sales(dir: string, partBytes: number): { sales: StarTable; returns: StarTable } {
  const random = seededRandom(53);
  const returnsRandom = seededRandom(59);
  const returnLines: string[] = [];
  const span = DAYS * DAY_MS;
  let order = 0;
  let linesLeft = 0;
  let orderAt = 0;
  let customer = 1;
  let store = 1;
  let channel = 'store';
  let promo = '';
  const table = writeTable(
    dir,
    'sales',
    'sale_id,order_code,sold_at,date_key,customer_id,product_id,store_id,promo_id,channel,quantity,unit_price,discount_amount,net_amount',
    STAR_SIZES.sales,
    (i) => {
      if (linesLeft === 0) {
        order++;
        linesLeft = 1 + Math.floor(random() * random() * 5);
        // Growing sales: the square root spreads more orders into later days.
        orderAt = FIRST_DAY + Math.floor(Math.sqrt((i + random()) / STAR_SIZES.sales) * span);
        orderAt += Math.floor(random() * 3600_000) % DAY_MS;
        customer = 1 + Math.floor(random() ** 2 * STAR_SIZES.customers);
        store = 1 + Math.floor(random() * STAR_SIZES.stores);
        channel = pick(random, CHANNELS);
        promo = random() < 0.25 ? String(1 + Math.floor(random() * STAR_SIZES.promotions)) : '';
      }
      linesLeft--;
      const product = 1 + Math.floor(random() ** 3 * STAR_SIZES.products);
      const quantity = 1 + Math.floor(random() ** 2 * 10);
      const price = 1 + ((product * 7919) % 150000) / 100;
      const discount = promo ? price * quantity * (0.05 + (Number(promo) % 6) * 0.05) : 0;
      const net = price * quantity - discount;
      const at = Math.min(orderAt, FIRST_DAY + span - 1000);
      const dateKey = new Date(at).toISOString().slice(0, 10);
      if (returnsRandom() < STAR_SIZES.returnsShare) {
        const returnedAt = at + Math.floor((1 + returnsRandom() * 40) * DAY_MS);
        const refund = returnsRandom() < 0.2 ? net * 0.5 : net;
        returnLines.push(
          `${returnLines.length + 1},${i + 1},${timestamp(returnedAt)},${pick(returnsRandom, REASONS)},${money(refund)},${returnsRandom() < 0.1 ? '' : field(comment(returnsRandom))}`,
        );
      }
      return `${i + 1},O-${pad(order, 8)},${timestamp(at)},${dateKey},${customer},${product},${store},${promo},${channel},${quantity},${money(price)},${money(discount)},${money(net)}`;
    },
    partBytes,
  );
  const returns = writeTable(
    dir,
    'returns',
    'return_id,sale_id,returned_at,reason_code,refund_amount,comment',
    returnLines.length,
    (i) => returnLines[i] as string,
    partBytes,
  );
  const schema = [
    ['sale_id', 'bigint'],
    ['order_code', 'varchar'],
    ['sold_at', 'timestamp'],
    ['date_key', 'date'],
    ['customer_id', 'bigint'],
    ['product_id', 'bigint'],
    ['store_id', 'bigint'],
    ['promo_id', 'bigint'],
    ['channel', 'varchar'],
    ['quantity', 'integer'],
    ['unit_price', 'double'],
    ['discount_amount', 'double'],
    ['net_amount', 'double'],
  ].map(([name, type]) => ({ name: name as string, type: type as string, nullable: name === 'promo_id' }));
  return { sales: { ...table, schema }, returns };
}

/**
 * Writes the schema's CSV files into `dir` (kept: a second run with the same `dir` reuses
 * them, see `manifest`); each file at most `partBytes`.
 */
export function writeStarSchema(dir: string, partBytes: number): StarTable[] {
  const manifest = path.join(dir, 'manifest.json');
  const sizes = JSON.stringify({ ...STAR_SIZES, partBytes, version: 2 });
  if (fs.existsSync(manifest)) {
    const kept = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { sizes: string; tables: StarTable[] };
    if (kept.sizes === sizes && kept.tables.every((t) => t.files.every((f) => fs.existsSync(f))))
      return kept.tables;
  }
  fs.mkdirSync(dir, { recursive: true });
  const facts = sales(dir, partBytes);
  const tables = [
    calendar(dir, partBytes),
    stores(dir, partBytes),
    products(dir, partBytes),
    customers(dir, partBytes),
    promotions(dir, partBytes),
    facts.sales,
    facts.returns,
  ];
  fs.writeFileSync(manifest, JSON.stringify({ sizes, tables }));
  return tables;
}
