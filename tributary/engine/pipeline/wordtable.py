"""Words of a byte buffer found, keyed and looked up in bulk with numpy.

The token counter (``tributary.engine.pipeline.tokens``) counts a text as its punctuation plus
the tokens of its words, and most words of a new text are words it has counted before.
Looking each one up in a dict costs a Python slice, hash and call per word; here a whole
batch of texts, joined into one buffer, is split into words at once and every word is
looked up at once in a hash table of numpy arrays. A numpy call costs a few
microseconds on this machine whatever its size, so both steps are a fixed couple of
dozen calls — no loop over words, probes or slots.

The buffer comes already folded (``fold``): word bytes — ASCII letters and digits, and
every byte beyond ASCII — lower-cased, every other byte replaced by a code below
``"0"``. A word is a maximal run of word bytes. One of at most ``KEY_BYTES`` (24) bytes
is keyed by its bytes read as three little-endian uint64 windows (zero-copy, through a
strided view of the buffer), each masked to the word's length; word bytes are never
zero, so the three numbers identify the word exactly. Nine words in ten fit the first
window. The key is a hash that is a bijection of the first window once the others are
fixed (xor with the others mixed, times an odd constant) and the other two windows.
A slot holds a word only when all three equal the word's, so two different words never
match each other: a collision, or a word that found no free slot, only costs a miss —
the caller then asks its dict — never another word's count. Longer words (about one
in a thousand) always miss.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

KEY_BYTES = 24  # longer words are never held: the caller looks them up itself
FIRST_WORD_BYTE = ord("0")  # folded bytes below this are not word bytes
_PAD = KEY_BYTES + 8  # bytes after a buffer, so both windows of every word can be read
_WINDOW = np.dtype("<u8")
_MASKS = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)  # the low n bytes
# Odd multipliers permute uint64, so the hash stays a bijection of the first window.
_MIX1 = np.uint64(0x9E3779B97F4A7C15)
_MIX2 = np.uint64(0xD6E8FEB86659FD93)
_MIX3 = np.uint64(0xC2B2AE3D27D4EB4F)
_EIGHT = np.int64(8)
_SLACK = 4  # slots per word at least: a word rarely finds all four slots it can use taken
_COUNT_BITS = np.uint8(127)  # a count is a byte: 0 marks an empty slot, and
_LONGER = np.uint8(128)  # its top bit a word of more than 8 bytes

Int64s = npt.NDArray[np.int64]
UInt64s = npt.NDArray[np.uint64]


def fold_table(punctuation: int, other: int) -> bytes:
    """A ``bytes.translate`` table folding as ``fold`` needs: ASCII letters lower-cased,
    word bytes kept, ASCII punctuation to ``punctuation``, ASCII whitespace (space, tab,
    newline, carriage return) to 0, any other byte (ASCII control characters) to
    ``other``; both codes non-zero and below ``"0"``."""
    if not 0 < punctuation < FIRST_WORD_BYTE or not 0 < other < FIRST_WORD_BYTE or punctuation == other:
        raise ValueError("class codes must be distinct, non-zero and below '0'")
    table = bytearray(256)
    for byte in range(256):
        char = chr(byte)
        if byte >= 128 or char.isalnum():
            table[byte] = ord(char.lower()) if byte < 128 else byte
        elif char in " \t\n\r":
            table[byte] = 0
        else:
            table[byte] = punctuation if 32 < byte < 127 else other
    return bytes(table)


def fold(buffer: bytes, table: bytes) -> bytes:
    """``buffer`` folded by ``table`` (from ``fold_table``) and framed as ``find_words``
    needs it: one whitespace byte before (offsets in the result are one more than in
    ``buffer``), whitespace after (room for the windows of its last word)."""
    return b"\x00" + buffer.translate(table) + b"\x00" * _PAD


@dataclass(frozen=True, slots=True)
class Words:
    """The words of a folded buffer, in order: byte offsets in it, and keys (all 0 for
    a word longer than ``KEY_BYTES``: no word's hash is 0)."""

    starts: Int64s
    ends: Int64s
    hashes: UInt64s
    second: UInt64s
    third: UInt64s


def find_words(folded: bytes, codes: npt.NDArray[np.uint8]) -> Words:
    """The words of ``folded`` (from ``fold``), whose bytes as an array are ``codes``."""
    is_word = codes >= FIRST_WORD_BYTE
    edges = np.flatnonzero(is_word[1:] != is_word[:-1])  # alternately the byte before a start and a last byte
    edges += 1
    starts, ends = edges[0::2], edges[1::2]
    lengths = ends - starts
    windows = np.ndarray(shape=(len(folded) - 7,), dtype=_WINDOW, buffer=folded, strides=(1,))
    hashes: UInt64s = windows[starts]
    hashes &= _MASKS.take(lengths, mode="clip")
    second = np.zeros(len(starts), dtype=np.uint64)
    third = np.zeros(len(starts), dtype=np.uint64)
    longer = np.flatnonzero(lengths > _EIGHT)
    if longer.size:
        at = starts[longer]
        at += _EIGHT
        rest = lengths[longer]
        rest -= _EIGHT
        middle = windows[at]
        middle &= _MASKS.take(rest, mode="clip")
        at += _EIGHT
        rest -= _EIGHT
        last = windows[at]
        last &= _MASKS.take(rest, mode="clip")  # (a negative rest clips to no bytes)
        too_long = rest > _EIGHT
        middle[too_long] = 0
        last[too_long] = 0
        second[longer] = middle
        third[longer] = last
        middle *= _MIX1
        last *= _MIX3
        middle ^= last
        hashes[longer] ^= middle
        hashes[longer[too_long]] = 0
    hashes *= _MIX2
    return Words(starts, ends, hashes, second, third)


def word_keys(words: list[bytes], table: bytes) -> Words:
    """The keys of separate words (each folded, all word bytes), in order."""
    folded = fold(b"\n".join(words), table)
    found = find_words(folded, np.frombuffer(folded, dtype=np.uint8))
    if len(found.starts) != len(words):
        raise ValueError("each word must be one run of word bytes")
    return found


@dataclass(slots=True)
class WordTable:
    """Token counts of words in a hash table of two-slot buckets, at most a quarter full.
    A word goes into the first free slot of its bucket or the next one, and is not held
    if all four are taken. A slot is an entry in three arrays: hash (a bucket's two
    together, so one read gets them), second window, and count in a byte whose top bit
    flags a word of more than 8 bytes; count 0 marks it empty, so words of no tokens (or
    over 127) are never held. Not thread-safe: the caller serialises all calls."""

    hashes: UInt64s  # (buckets + 1, 2), buckets a power of two: the last row only overflow
    second: UInt64s  # (2 * buckets + 2,), like the other two
    third: UInt64s
    counts: npt.NDArray[np.uint8]
    size: int = 0

    @staticmethod
    def empty(capacity: int = 1024) -> WordTable:
        """A table with room for at least ``capacity`` words."""
        buckets = 1 << max(1, (-(-_SLACK * capacity // 2) - 1).bit_length())  # a power of two
        slots = 2 * buckets + 2
        return WordTable(
            np.zeros((buckets + 1, 2), dtype=np.uint64),
            np.zeros(slots, dtype=np.uint64),
            np.zeros(slots, dtype=np.uint64),
            np.zeros(slots, dtype=np.uint8),
        )

    def copy(self) -> WordTable:
        return WordTable(self.hashes.copy(), self.second.copy(), self.third.copy(), self.counts.copy(), self.size)

    def __len__(self) -> int:
        return self.size

    def _buckets(self, hashes: UInt64s) -> UInt64s:
        return hashes >> np.uint64(65 - (len(self.hashes) - 1).bit_length())  # the hash's top bits

    def lookup(self, words: Words) -> Int64s:
        """Each word's count, or 0 where the table does not hold it."""
        hashes = words.hashes
        buckets = self._buckets(hashes)
        own = np.take(self.hashes, buckets, axis=0)
        buckets += np.uint64(1)
        next_ = np.take(self.hashes, buckets, axis=0)
        buckets -= np.uint64(1)
        # The slot of equal hash among the four, by column (numpy reduces a short axis
        # slowly); of several, the last (a word is held once: the others hold other words).
        held = own[:, 0] == hashes
        way = (own[:, 1] == hashes).view(np.uint8)
        held |= way.view(np.bool_)
        for column, found in ((2, next_[:, 0] == hashes), (3, next_[:, 1] == hashes)):
            held |= found
            np.maximum(way, found.view(np.uint8) * np.uint8(column), out=way)
        slots = buckets + buckets
        slots += way
        counts = np.take(self.counts, slots)
        # The other windows are read only where needed: for a word of more than 8 bytes
        # in a slot flagged as holding one; a word of at most 8 bytes (hash alone) needs
        # a slot not so flagged. (Nine words in ten: two cache misses fewer each.)
        flagged = counts >= _LONGER
        held &= flagged == (words.second != 0)
        check = np.flatnonzero(flagged & held)
        at = slots[check]
        same = np.take(self.second, at) == words.second[check]
        same &= np.take(self.third, at) == words.third[check]
        held[check] = same
        counts &= _COUNT_BITS
        result = counts.astype(np.int64)
        result *= held  # (an empty slot's count is 0 anyway)
        return result

    def add(self, words: Words, counts: Int64s) -> None:
        """Hold these words too, as far as there is room: distinct and not held yet;
        words longer than ``KEY_BYTES`` and counts of 0 or over 127 are left out."""
        keep = np.flatnonzero((words.hashes != 0) & (counts > 0) & (counts <= _COUNT_BITS))
        if _SLACK * (self.size + keep.size) > len(self.counts):
            held = np.flatnonzero(self.counts)
            bigger = WordTable.empty(self.size + keep.size)  # at least twice the slots
            bigger._place(self.hashes.reshape(-1)[held], self.second[held], self.third[held], self.counts[held])
            self.hashes, self.second, self.third = bigger.hashes, bigger.second, bigger.third
            self.counts, self.size = bigger.counts, bigger.size
        flags = counts[keep].astype(np.uint8)
        flags[words.second[keep] != 0] |= _LONGER
        self._place(words.hashes[keep], words.second[keep], words.third[keep], flags)

    def _place(self, hashes: UInt64s, second: UInt64s, third: UInt64s, counts: npt.NDArray[np.uint8]) -> None:
        flat = self.hashes.reshape(-1)
        todo = np.arange(len(hashes))
        reach = np.arange(4)
        for _ in range(4):  # each word to the first free slot it can reach; one word a slot a round
            window = (2 * self._buckets(hashes[todo]).astype(np.int64))[:, None] + reach
            free = self.counts[window] == 0
            room = np.flatnonzero(free.any(axis=1))
            slots = window[room, free[room].argmax(axis=1)]
            chosen, first = np.unique(slots, return_index=True)
            placed = room[first]
            taken = todo[placed]
            flat[chosen] = hashes[taken]
            self.second[chosen] = second[taken]
            self.third[chosen] = third[taken]
            self.counts[chosen] = counts[taken]
            self.size += len(chosen)
            left = np.zeros(todo.size, dtype=np.bool_)  # a word with no free slot in reach is left out
            left[room] = True
            left[placed] = False
            todo = todo[left]
            if not todo.size:
                break
