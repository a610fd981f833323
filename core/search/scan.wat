;; The encoder's scan over every tool's sentence vector (core/search/scan.ts), in WebAssembly with 128-bit SIMD:
;; scores[i] = q · row i, for n rows of `dims` floats each (dims a multiple of 8), laid out one after another.
;; Compiled by `npm run build:scan` (bin/build-scan.ts, with the npm package wabt) into core/search/scan-wasm.ts;
;; tests/search-encoder.test.ts checks that the compiled module is this text's.
(module
  (import "env" "memory" (memory 1))
  (func (export "scan") (param $q i32) (param $rows i32) (param $n i32) (param $dims i32) (param $out i32)
    (local $k i32) (local $bytes i32) (local $end i32) (local $a v128) (local $b v128)
    (local.set $bytes (i32.shl (local.get $dims) (i32.const 2)))
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 2))))
    (block $done
      (loop $row
        (br_if $done (i32.ge_u (local.get $out) (local.get $end)))
        (local.set $a (v128.const f32x4 0 0 0 0))
        (local.set $b (v128.const f32x4 0 0 0 0))
        (local.set $k (i32.const 0))
        (loop $dim
          (local.set $a
            (f32x4.add (local.get $a)
              (f32x4.mul
                (v128.load (i32.add (local.get $q) (local.get $k)))
                (v128.load (i32.add (local.get $rows) (local.get $k))))))
          (local.set $b
            (f32x4.add (local.get $b)
              (f32x4.mul
                (v128.load offset=16 (i32.add (local.get $q) (local.get $k)))
                (v128.load offset=16 (i32.add (local.get $rows) (local.get $k))))))
          (local.set $k (i32.add (local.get $k) (i32.const 32)))
          (br_if $dim (i32.lt_u (local.get $k) (local.get $bytes))))
        (local.set $a (f32x4.add (local.get $a) (local.get $b)))
        (f32.store (local.get $out)
          (f32.add
            (f32.add (f32x4.extract_lane 0 (local.get $a)) (f32x4.extract_lane 1 (local.get $a)))
            (f32.add (f32x4.extract_lane 2 (local.get $a)) (f32x4.extract_lane 3 (local.get $a)))))
        (local.set $rows (i32.add (local.get $rows) (local.get $bytes)))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (br $row)))))
