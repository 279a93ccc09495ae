//! A small PNG encoder for the charts: an indexed-colour image, 8 bits a
//! pixel, every row unfiltered, in one zlib stream of one fixed-Huffman
//! deflate block (RFC 1950, 1951). Its only matches are runs (distance 1)
//! and copies of the row above (distance one row), which is what a chart
//! is made of: a 640 × 336 chart of ten bars with long names takes
//! under 10 KB.

/// The PNG of `pixels` (`width` × `height` palette indices, row by row)
/// over `palette` (at most 256 colours).
pub(crate) fn encode(width: u32, height: u32, palette: &[[u8; 3]], pixels: &[u8]) -> Vec<u8> {
    assert!(
        !palette.is_empty() && palette.len() <= 256 && pixels.len() == width as usize * height as usize,
        "an image of {width} × {height} pixels over 1 to 256 colours"
    );
    let mut raw = Vec::with_capacity(pixels.len() + height as usize);
    for row in pixels.chunks(width.max(1) as usize) {
        raw.push(0); // filter: none
        raw.extend_from_slice(row);
    }
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    // 8 bits a pixel, indexed colour, deflate, adaptive filters, no interlace.
    ihdr.extend_from_slice(&[8, 3, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    chunk(&mut png, b"IHDR", &ihdr);
    chunk(&mut png, b"PLTE", palette.concat().as_slice());
    chunk(&mut png, b"IDAT", &zlib(&raw, width as usize + 1));
    chunk(&mut png, b"IEND", &[]);
    png
}

fn chunk(png: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    png.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = png.len();
    png.extend_from_slice(kind);
    png.extend_from_slice(data);
    let crc = crc32(&png[start..]);
    png.extend_from_slice(&crc.to_be_bytes());
}

/// `data` as a zlib stream whose matches are at distance 1 or `row`.
fn zlib(data: &[u8], row: usize) -> Vec<u8> {
    // A 32 KiB window, the fastest level; 0x7801 is a multiple of 31.
    let mut out = Bits { out: vec![0x78, 0x01], acc: 0, n: 0 };
    out.push(1, 1); // the final block
    out.push(1, 2); // of fixed Huffman codes
    let distances = [1, row];
    let mut i = 0;
    while i < data.len() {
        let best = distances
            .iter()
            .filter(|d| **d <= i && **d <= 32_768)
            .map(|d| (run(data, i, *d), *d))
            .max()
            .filter(|(len, _)| *len >= 3);
        match best {
            Some((len, distance)) => {
                out.length(len);
                out.distance(distance);
                i += len;
            }
            None => {
                out.symbol(u16::from(data[i]));
                i += 1;
            }
        }
    }
    out.symbol(256);
    let mut bytes = out.finish();
    bytes.extend_from_slice(&adler32(data).to_be_bytes());
    bytes
}

/// How many bytes from `at` repeat those `distance` before (at most 258).
fn run(data: &[u8], at: usize, distance: usize) -> usize {
    data[at..].iter().zip(&data[at - distance..]).take(258).take_while(|(a, b)| a == b).count()
}

const LENGTH_BASE: [u16; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195,
    227, 258,
];
const LENGTH_EXTRA: [u32; 29] =
    [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DISTANCE_BASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073,
    4097, 6145, 8193, 12289, 16385, 24577,
];
const DISTANCE_EXTRA: [u32; 30] =
    [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];

/// Deflate's bit stream: values from the least significant bit, Huffman
/// codes from the most.
struct Bits {
    out: Vec<u8>,
    acc: u32,
    n: u32,
}

impl Bits {
    fn push(&mut self, value: u32, count: u32) {
        self.acc |= value << self.n;
        self.n += count;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    fn code(&mut self, code: u32, len: u32) {
        self.push(code.reverse_bits() >> (32 - len), len);
    }

    /// A literal (0 to 255), the end of the block (256) or a length
    /// code (257 to 285), in the fixed code.
    fn symbol(&mut self, s: u16) {
        let s = u32::from(s);
        match s {
            0..=143 => self.code(0x30 + s, 8),
            144..=255 => self.code(0x190 + s - 144, 9),
            256..=279 => self.code(s - 256, 7),
            _ => self.code(0xc0 + s - 280, 8),
        }
    }

    fn length(&mut self, len: usize) {
        let i = LENGTH_BASE.iter().rposition(|b| usize::from(*b) <= len).unwrap_or(0);
        self.symbol(257 + i as u16);
        self.push((len - usize::from(LENGTH_BASE[i])) as u32, LENGTH_EXTRA[i]);
    }

    fn distance(&mut self, d: usize) {
        let i = DISTANCE_BASE.iter().rposition(|b| usize::from(*b) <= d).unwrap_or(0);
        self.code(i as u32, 5);
        self.push((d - usize::from(DISTANCE_BASE[i])) as u32, DISTANCE_EXTRA[i]);
    }

    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

/// CRC-32 (ISO-HDLC, as PNG's chunks have it).
fn crc32(data: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut table = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 == 1 { 0xedb8_8320 ^ (c >> 1) } else { c >> 1 };
                k += 1;
            }
            table[i] = c;
            i += 1;
        }
        table
    };
    !data.iter().fold(!0u32, |c, b| TABLE[((c ^ u32::from(*b)) & 0xff) as usize] ^ (c >> 8))
}

/// Adler-32, zlib's trailer.
fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    // 5552 bytes at most between reductions keeps `b` within 32 bits.
    for block in data.chunks(5552) {
        for byte in block {
            a += u32::from(*byte);
            b += a;
        }
        a %= 65_521;
        b %= 65_521;
    }
    (b << 16) | a
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A fixed-Huffman inflate written from RFC 1951's tables, apart from
    /// the encoder's: the codes are rebuilt from their lengths.
    pub(crate) fn inflate(zlib: &[u8]) -> Vec<u8> {
        assert_eq!(&zlib[..2], [0x78, 0x01]);
        let bits: Vec<u8> = zlib[2..].iter().flat_map(|b| (0..8).map(move |i| (b >> i) & 1)).collect();
        let mut at = 0;
        let mut take = |n: usize| {
            let v = (0..n).map(|i| u32::from(bits[at + i]) << i).sum::<u32>();
            at += n;
            v
        };
        assert_eq!((take(1), take(2)), (1, 1), "one final fixed block");
        // Canonical codes from the lengths 8, 9, 7, 8 (RFC 1951 3.2.2, 3.2.6).
        let lengths: Vec<u32> = (0..288)
            .map(|s| match s {
                0..=143 => 8,
                144..=255 => 9,
                256..=279 => 7,
                _ => 8,
            })
            .collect();
        let mut codes = std::collections::HashMap::new();
        let mut next = 0u32;
        for len in 7..=9 {
            for (s, l) in lengths.iter().enumerate() {
                if *l == len {
                    codes.insert((len, next), s as u32);
                    next += 1;
                }
            }
            next <<= 1;
        }
        let mut out = Vec::new();
        loop {
            let (mut code, mut len) = (0, 0);
            let s = loop {
                code = (code << 1) | take(1);
                len += 1;
                if let Some(s) = codes.get(&(len, code)) {
                    break *s;
                }
                assert!(len < 9, "a code of the fixed table");
            };
            match s {
                0..=255 => out.push(s as u8),
                256 => break,
                _ => {
                    let i = (s - 257) as usize;
                    let len = usize::from(LENGTH_BASE[i]) + take(LENGTH_EXTRA[i] as usize) as usize;
                    let d = (0..5).fold(0, |c, _| (c << 1) | take(1)) as usize;
                    let distance = usize::from(DISTANCE_BASE[d]) + take(DISTANCE_EXTRA[d] as usize) as usize;
                    for _ in 0..len {
                        out.push(out[out.len() - distance]);
                    }
                }
            }
        }
        let trailer = &zlib[zlib.len() - 4..];
        assert_eq!(trailer, adler32(&out).to_be_bytes());
        out
    }

    /// The IDAT of `png`, its one image data chunk.
    pub(crate) fn idat(png: &[u8]) -> Vec<u8> {
        chunks(png).into_iter().find(|(kind, _)| kind == "IDAT").map(|(_, data)| data).unwrap()
    }

    /// The chunks of `png`, each checked against its CRC.
    fn chunks(png: &[u8]) -> Vec<(String, Vec<u8>)> {
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let mut at = 8;
        let mut found = Vec::new();
        while at < png.len() {
            let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
            let body = &png[at + 4..at + 8 + len];
            let crc = u32::from_be_bytes(png[at + 8 + len..at + 12 + len].try_into().unwrap());
            assert_eq!(crc, crc32(body));
            found.push((String::from_utf8(body[..4].to_vec()).unwrap(), body[4..].to_vec()));
            at += 12 + len;
        }
        found
    }

    #[test]
    fn checksums_have_their_check_values() {
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32(b""), 0);
        assert_eq!(adler32(b"Wikipedia"), 0x11e6_0398);
        let long = vec![0xff; 100_000];
        assert_eq!(adler32(&long), adler32_slow(&long), "reduced often enough");
    }

    fn adler32_slow(data: &[u8]) -> u32 {
        let (a, b) = data.iter().fold((1u64, 0u64), |(a, b), x| {
            let a = (a + u64::from(*x)) % 65_521;
            (a, (b + a) % 65_521)
        });
        ((b << 16) | a) as u32
    }

    #[test]
    fn deflate_round_trips_runs_rows_and_every_length() {
        let mut data: Vec<u8> = (0..=255).collect();
        for len in 1..300 {
            data.extend(std::iter::repeat_n((len % 7) as u8, len));
        }
        let row: Vec<u8> = (0..641).map(|i| (i / 40) as u8).collect();
        for _ in 0..20 {
            data.extend_from_slice(&row);
        }
        assert_eq!(inflate(&zlib(&data, 641)), data);
        assert_eq!(inflate(&zlib(&[], 1)), Vec::<u8>::new());
        assert!(zlib(&data, 641).len() < data.len() / 10, "runs and rows compress");
    }

    #[test]
    fn a_png_has_its_chunks_in_order_with_their_crcs() {
        let palette = [[255, 255, 255], [59, 111, 216]];
        let pixels: Vec<u8> = (0..12).map(|i| u8::from(i % 4 < 2)).collect();
        let png = encode(4, 3, &palette, &pixels);
        let chunks = chunks(&png);
        let kinds: Vec<&str> = chunks.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(kinds, ["IHDR", "PLTE", "IDAT", "IEND"]);
        assert_eq!(chunks[0].1, [0, 0, 0, 4, 0, 0, 0, 3, 8, 3, 0, 0, 0]);
        assert_eq!(chunks[1].1, [255, 255, 255, 59, 111, 216]);
        let idat = &chunks[2].1;
        assert_eq!(inflate(idat), [0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 0]);
    }
}
