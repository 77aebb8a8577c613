'use strict';
// Drives a running plugins-server.js as a storefront and an admin would, over HTTP with plain fetch and
// Vendure's bearer tokens: the trial of issue #43 read in docs/precision.md ("Dead code inside live beans:
// Vendure"). The admin sets up what a first sale needs (a country, a zone, the channel's tax and shipping zone, a
// tax category and rate), creates a product with one variant and lists products, orders and customers; the shop
// asks the plugin's own query, lists products and collections, searches, fills a basket, sets a shipping address,
// asks the eligible shipping methods, registers a customer and tries a login (Vendure asks for the e-mail to be
// verified first). Prints one line per operation; exits 1 when the server cannot be reached.
//   node storefront.js http://127.0.0.1:<port>
const base = process.argv[2];

/** One GraphQL operation on `api` ('shop-api' or 'admin-api'); returns the body and the session token it set. */
async function gql(api, query, variables, token) {
  const res = await fetch(`${base}/${api}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  const name = /\{\s*(\w+)/.exec(query)?.[1];
  console.log(`${api} ${name}: ${body.errors ? `error ${body.errors[0].message}` : 'ok'}`);
  return { data: body.data, token: res.headers.get('vendure-auth-token') ?? token };
}

async function admin() {
  const { token } = await gql(
    'admin-api',
    'mutation { login(username: "superadmin", password: "superadmin") { ... on CurrentUser { id } } }',
  );
  const ask = (query, variables) => gql('admin-api', query, variables, token).then((r) => r.data);
  await ask('{ products { totalItems } }');
  await ask('{ orders { totalItems } }');
  await ask('{ customers { totalItems } }');
  const country = await ask(
    'mutation { createCountry(input: { code: "GB", enabled: true, translations: [{ languageCode: en, name: "UK" }] }) { id } }',
  );
  const zone = await ask('mutation ($m: [ID!]) { createZone(input: { name: "Europe", memberIds: $m }) { id } }', {
    m: [country.createCountry.id],
  });
  const z = zone.createZone.id;
  await ask(
    'mutation ($z: ID!) { updateChannel(input: { id: 1, defaultTaxZoneId: $z, defaultShippingZoneId: $z }) { ... on Channel { id } } }',
    { z },
  );
  const category = await ask('mutation { createTaxCategory(input: { name: "Standard", isDefault: true }) { id } }');
  await ask(
    'mutation ($z: ID!, $c: ID!) { createTaxRate(input: { name: "VAT", enabled: true, value: 20, categoryId: $c, zoneId: $z }) { id } }',
    { z, c: category.createTaxCategory.id },
  );
  const product = await ask(
    'mutation { createProduct(input: { translations: [{ languageCode: en, name: "Lamp", slug: "lamp", description: "a lamp" }] }) { id } }',
  );
  await ask(
    'mutation ($p: ID!) { createProductVariants(input: [{ productId: $p, sku: "LAMP-1", price: 1000, translations: [{ languageCode: en, name: "Lamp" }] }]) { id } }',
    { p: product.createProduct.id },
  );
}

async function shop() {
  let token;
  const ask = async (query, variables) => {
    const r = await gql('shop-api', query, variables, token);
    token = r.token;
    return r.data;
  };
  await ask('{ greeting }');
  await ask('{ products { items { id } } }');
  await ask('{ collections { totalItems } }');
  await ask('{ search(input: { term: "lamp" }) { totalItems } }');
  await ask('{ activeOrder { id } }');
  const product = await ask('{ product(slug: "lamp") { variants { id } } }');
  await ask('mutation ($v: ID!) { addItemToOrder(productVariantId: $v, quantity: 1) { ... on Order { id } } }', {
    v: product.product.variants[0].id,
  });
  await ask(
    'mutation { setOrderShippingAddress(input: { streetLine1: "1 Main St", city: "London", postalCode: "N1", countryCode: "GB" }) { ... on Order { id } } }',
  );
  await ask('{ eligibleShippingMethods { id } }');
  token = undefined; // a new visitor
  await ask(
    'mutation { registerCustomerAccount(input: { emailAddress: "ann@example.com", firstName: "Ann", lastName: "Lee", password: "correct-horse" }) { ... on Success { success } } }',
  );
  await ask(
    'mutation { login(username: "ann@example.com", password: "correct-horse") { ... on CurrentUser { id } ... on ErrorResult { message } } }',
  );
  await ask('{ activeCustomer { id } }');
}

admin()
  .then(shop)
  .catch((err) => {
    console.error(`storefront: ${err.message}`);
    process.exit(1);
  });
