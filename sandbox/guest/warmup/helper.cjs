// CommonJS half of the warm-up package (warms the CJS loader).
module.exports = (s) => String(s);
