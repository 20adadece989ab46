/*
 * Raw DEFLATE decoding and CRC-32 (inflate.h). Names follow RFC 1951: a
 * block is stored, or coded with the fixed or a dynamic pair of Huffman
 * codes (literal/length and distance); the tables give each length and
 * distance symbol's base and its count of extra bits. Every failure sets
 * the state's error once and unwinds; nothing reads past `in` or writes
 * past `out`.
 */
#include "runtime/inflate.h"

#include <string.h>

#define KILN_INFLATE_MAX_BITS 15

typedef struct inflate_state_t {
  const uint8_t *in;
  size_t in_size, in_pos;
  uint8_t *out;
  size_t out_size, out_pos;
  uint32_t bit_buffer;
  int bit_count;
  const char *error;
} inflate_state_t;

/* Canonical Huffman code: how many codes of each length, and the symbols
 * in code order. */
typedef struct huffman_t {
  short count[KILN_INFLATE_MAX_BITS + 1];
  short symbol[288];
} huffman_t;

static const short length_base[29] = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
                                      15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
                                      67, 83, 99, 115, 131, 163, 195, 227, 258};
static const short length_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                       2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const short distance_base[30] = {
    1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
    193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const short distance_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                         6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

static void fail(inflate_state_t *s, const char *error) {
  if (!s->error) {
    s->error = error;
  }
}

/* The next `need` bits (at most 16), least significant first; 0 and an
 * error when the input ends. */
static int bits(inflate_state_t *s, int need) {
  uint32_t value = s->bit_buffer;
  while (s->bit_count < need) {
    if (s->in_pos == s->in_size) {
      fail(s, "data cut short");
      return 0;
    }
    value |= (uint32_t)s->in[s->in_pos++] << s->bit_count;
    s->bit_count += 8;
  }
  s->bit_buffer = value >> need;
  s->bit_count -= need;
  return (int)(value & ((1u << need) - 1u));
}

static void put(inflate_state_t *s, uint8_t byte) {
  if (s->out_pos == s->out_size) {
    fail(s, "more data than the recorded size");
    return;
  }
  s->out[s->out_pos++] = byte;
}

/* A stored block: the rest of the current byte dropped, LEN, ~LEN, bytes. */
static void stored(inflate_state_t *s) {
  s->bit_buffer = 0;
  s->bit_count = 0;
  if (s->in_size - s->in_pos < 4) {
    fail(s, "data cut short");
    return;
  }
  const uint8_t *p = s->in + s->in_pos;
  size_t length = (size_t)p[0] | (size_t)p[1] << 8;
  if (length != (size_t)(~(p[2] | p[3] << 8) & 0xffff)) {
    fail(s, "a stored block's length and its complement disagree");
    return;
  }
  s->in_pos += 4;
  if (s->in_size - s->in_pos < length) {
    fail(s, "data cut short");
  } else if (s->out_size - s->out_pos < length) {
    fail(s, "more data than the recorded size");
  } else {
    memcpy(s->out + s->out_pos, s->in + s->in_pos, length);
    s->in_pos += length;
    s->out_pos += length;
  }
}

/* The next symbol of code `h`, read a bit at a time; -1 on an error. */
static int decode(inflate_state_t *s, const huffman_t *h) {
  int code = 0, first = 0, index = 0;
  for (int length = 1; length <= KILN_INFLATE_MAX_BITS; ++length) {
    code |= bits(s, 1);
    if (s->error) {
      return -1;
    }
    int count = h->count[length];
    if (code - count < first) {
      return h->symbol[index + (code - first)];
    }
    index += count;
    first = (first + count) << 1;
    code <<= 1;
  }
  fail(s, "a Huffman code that is not in the block's code");
  return -1;
}

/* Builds `h` from the code lengths of `n` symbols: 0 for a complete code,
 * above 0 for an incomplete one, below 0 for an over-subscribed one. */
static int construct(huffman_t *h, const short *lengths, int n) {
  memset(h->count, 0, sizeof(h->count));
  for (int symbol = 0; symbol < n; ++symbol) {
    h->count[lengths[symbol]]++;
  }
  if (h->count[0] == n) {
    return 0;
  }
  int left = 1;
  for (int length = 1; length <= KILN_INFLATE_MAX_BITS; ++length) {
    left = (left << 1) - h->count[length];
    if (left < 0) {
      return left;
    }
  }
  short offsets[KILN_INFLATE_MAX_BITS + 1] = {0};
  for (int length = 1; length < KILN_INFLATE_MAX_BITS; ++length) {
    offsets[length + 1] = (short)(offsets[length] + h->count[length]);
  }
  for (int symbol = 0; symbol < n; ++symbol) {
    if (lengths[symbol] != 0) {
      h->symbol[offsets[lengths[symbol]]++] = (short)symbol;
    }
  }
  return left;
}

/* A copy of `length` bytes from `distance` back. */
static void copy_back(inflate_state_t *s, size_t length, size_t distance) {
  if (distance > s->out_pos) {
    fail(s, "a distance reaching before the start of the data");
  } else if (s->out_size - s->out_pos < length) {
    fail(s, "more data than the recorded size");
  } else {
    for (; length > 0; --length, ++s->out_pos) {
      s->out[s->out_pos] = s->out[s->out_pos - distance];
    }
  }
}

/* The symbols of a coded block, up to its end-of-block symbol. */
static void codes(inflate_state_t *s, const huffman_t *lengths, const huffman_t *distances) {
  for (;;) {
    int symbol = decode(s, lengths);
    if (symbol < 256) {
      if (symbol >= 0) {
        put(s, (uint8_t)symbol);
      }
    } else if (symbol == 256) {
      return;
    } else if (symbol - 257 >= 29) {
      fail(s, "a length symbol out of range");
    } else {
      symbol -= 257;
      size_t length = (size_t)(length_base[symbol] + bits(s, length_extra[symbol]));
      int d = decode(s, distances);
      if (d >= 30) {
        fail(s, "a distance symbol out of range");
      } else if (d >= 0) {
        size_t distance = (size_t)(distance_base[d] + bits(s, distance_extra[d]));
        if (!s->error) {
          copy_back(s, length, distance);
        }
      }
    }
    if (s->error) {
      return;
    }
  }
}

static void fixed(inflate_state_t *s) {
  short lengths[288];
  for (int symbol = 0; symbol < 288; ++symbol) {
    lengths[symbol] = symbol < 144 ? 8 : symbol < 256 ? 9 : symbol < 280 ? 7 : 8;
  }
  huffman_t literal, distance;
  construct(&literal, lengths, 288);
  for (int symbol = 0; symbol < 30; ++symbol) {
    lengths[symbol] = 5;
  }
  construct(&distance, lengths, 30);
  codes(s, &literal, &distance);
}

/* The code lengths of a dynamic block's two codes, themselves coded with
 * the code-length code; `lengths` gets nlen + ndist entries. */
static void read_lengths(inflate_state_t *s, const huffman_t *code, short *lengths, int total) {
  for (int index = 0; index < total && !s->error;) {
    int symbol = decode(s, code);
    if (symbol >= 0 && symbol < 16) {
      lengths[index++] = (short)symbol;
      continue;
    }
    if (symbol == 16 && index == 0) {
      fail(s, "a repeat of the previous length with none before it");
    }
    short repeated = symbol == 16 && index > 0 ? lengths[index - 1] : 0;
    int times = symbol == 16 ? 3 + bits(s, 2) : symbol == 17 ? 3 + bits(s, 3) : 11 + bits(s, 7);
    if (!s->error && index + times > total) {
      fail(s, "more code lengths than the block declares");
    }
    for (; !s->error && times > 0; --times) {
      lengths[index++] = repeated;
    }
  }
}

/* A code for a dynamic block is complete, or a single code of length 1. */
static int usable(int left, int n, const huffman_t *h) {
  return left == 0 || (left > 0 && n - h->count[0] == 1);
}

static void dynamic(inflate_state_t *s) {
  static const short order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
  int nlen = bits(s, 5) + 257, ndist = bits(s, 5) + 1, ncode = bits(s, 4) + 4;
  if (!s->error && (nlen > 286 || ndist > 30)) {
    fail(s, "more codes than DEFLATE has");
  }
  short lengths[320] = {0};
  for (int index = 0; index < ncode && !s->error; ++index) {
    lengths[order[index]] = (short)bits(s, 3);
  }
  huffman_t literal, distance;
  if (!s->error && construct(&literal, lengths, 19) != 0) {
    fail(s, "an incomplete code-length code");
  }
  if (!s->error) {
    memset(lengths, 0, sizeof(lengths));
    read_lengths(s, &literal, lengths, nlen + ndist);
  }
  if (!s->error && lengths[256] == 0) {
    fail(s, "a block without an end-of-block code");
  }
  if (!s->error && !usable(construct(&literal, lengths, nlen), nlen, &literal)) {
    fail(s, "an incomplete literal/length code");
  }
  if (!s->error && !usable(construct(&distance, lengths + nlen, ndist), ndist, &distance)) {
    fail(s, "an incomplete distance code");
  }
  if (!s->error) {
    codes(s, &literal, &distance);
  }
}

const char *kiln_inflate(const uint8_t *in, size_t in_size, uint8_t *out, size_t out_size) {
  inflate_state_t s = {.in = in, .in_size = in_size, .out = out, .out_size = out_size};
  int last = 0;
  while (!last && !s.error) {
    last = bits(&s, 1);
    int type = bits(&s, 2);
    if (s.error) {
      break;
    }
    if (type == 0) {
      stored(&s);
    } else if (type == 1) {
      fixed(&s);
    } else if (type == 2) {
      dynamic(&s);
    } else {
      fail(&s, "a block of the reserved type 3");
    }
  }
  if (!s.error && s.out_pos != s.out_size) {
    fail(&s, "less data than the recorded size");
  }
  return s.error;
}

uint32_t kiln_crc32(const uint8_t *data, size_t size) {
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < size; ++i) {
    crc ^= data[i];
    for (int k = 0; k < 8; ++k) {
      crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
  }
  return ~crc;
}
