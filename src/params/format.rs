//! The layout of a bellperson `Parameters::write` file, found and checked
//! before any point is decoded:
//!
//! ```text
//! vk:   alpha_g1 beta_g1 beta_g2 gamma_g2 delta_g1 delta_g2   (uncompressed)
//!       u32 BE count, ic points (G1)
//! then  u32 BE count + points for h, l, a, b_g1 (G1) and b_g2 (G2)
//! ```
//!
//! G1 points take 96 bytes, G2 points 192; big-endian coordinates with the
//! zcash flag bits in the top of byte 0.

use super::source::Source;
use crate::error::{Error, Result};
use crate::math::{G1, G2};

/// Which group a section holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    G1,
    G2,
}

impl Group {
    pub fn point_bytes(self) -> usize {
        match self {
            Group::G1 => G1::UNCOMPRESSED_BYTES,
            Group::G2 => G2::UNCOMPRESSED_BYTES,
        }
    }
}

/// One counted vector of points in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Section {
    pub name: &'static str,
    pub group: Group,
    pub count: usize,
    /// Byte offset of the first point (just after the count).
    pub offset: usize,
}

impl Section {
    pub fn end(&self) -> usize {
        self.offset + self.count * self.group.point_bytes()
    }

    /// Byte offset of point `index`.
    pub fn point_offset(&self, index: usize) -> usize {
        self.offset + index * self.group.point_bytes()
    }
}

/// The fixed verifying-key points at the head of the file, in order.
pub const VK_POINTS: [(&str, Group); 6] = [
    ("alpha_g1", Group::G1),
    ("beta_g1", Group::G1),
    ("beta_g2", Group::G2),
    ("gamma_g2", Group::G2),
    ("delta_g1", Group::G1),
    ("delta_g2", Group::G2),
];

/// Size of the fixed verifying-key head: 3 G1 and 3 G2 points.
pub const VK_HEAD_BYTES: usize = 3 * G1::UNCOMPRESSED_BYTES + 3 * G2::UNCOMPRESSED_BYTES;

/// The counted sections in file order.
const SECTIONS: [(&str, Group); 6] = [
    ("ic", Group::G1),
    ("h", Group::G1),
    ("l", Group::G1),
    ("a", Group::G1),
    ("b_g1", Group::G1),
    ("b_g2", Group::G2),
];

/// Where everything is in a parameters file of a known length.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub ic: Section,
    pub h: Section,
    pub l: Section,
    pub a: Section,
    pub b_g1: Section,
    pub b_g2: Section,
}

impl Layout {
    /// Walks the counts, checking every section fits in the file, the file
    /// has nothing after the last one, and the counts agree with each other.
    /// Reads only the counts.
    pub fn parse<S: Source + ?Sized>(file: &S) -> Result<Layout> {
        let len = file.len();
        if len == 0 {
            return Err(Error::params_format("parameters file is empty"));
        }
        if len < VK_HEAD_BYTES {
            return Err(Error::params_format(format!(
                "parameters file truncated: the verifying key needs {VK_HEAD_BYTES} bytes, the file has {len}"
            )));
        }
        let mut cursor = VK_HEAD_BYTES;
        let mut found = Vec::with_capacity(SECTIONS.len());
        for (name, group) in SECTIONS {
            if cursor + 4 > len {
                return Err(Error::params_format(format!(
                    "parameters file truncated: the count of section `{name}` at offset {cursor} is past the end ({len} bytes)"
                )));
            }
            let mut count_bytes = [0u8; 4];
            file.read_at(cursor, &mut count_bytes)?;
            let count = u32::from_be_bytes(count_bytes) as usize;
            let section = Section {
                name,
                group,
                count,
                offset: cursor + 4,
            };
            // usize is 64-bit on every supported target: no overflow for u32 counts.
            if section.end() > len {
                return Err(Error::params_format(format!(
                    "parameters file truncated: section `{name}` declares {count} points ({} bytes) at offset {}, the file ends at {len}",
                    count * group.point_bytes(),
                    section.offset,
                )));
            }
            cursor = section.end();
            found.push(section);
        }
        if cursor != len {
            return Err(Error::params_format(format!(
                "parameters file has {} unexpected bytes after section `b_g2` (which ends at offset {cursor})",
                len - cursor
            )));
        }
        let layout = Layout {
            ic: found[0],
            h: found[1],
            l: found[2],
            a: found[3],
            b_g1: found[4],
            b_g2: found[5],
        };
        layout.check_counts()?;
        Ok(layout)
    }

    pub fn sections(&self) -> [Section; 6] {
        [self.ic, self.h, self.l, self.a, self.b_g1, self.b_g2]
    }

    /// The relations every Groth16 setup of bellperson satisfies.
    fn check_counts(&self) -> Result<()> {
        let inputs = self.ic.count;
        let aux = self.l.count;
        let fail = |what: String| Err(Error::params_format(format!("inconsistent counts: {what}")));
        if inputs == 0 {
            return fail("`ic` is empty (there is always the ONE input)".into());
        }
        let domain = self.h.count + 1;
        if !domain.is_power_of_two() || domain < 2 {
            return fail(format!(
                "`h` has {} points; it must be a power of two minus one",
                self.h.count
            ));
        }
        if domain < inputs {
            return fail(format!(
                "domain {domain} is smaller than the {inputs} inputs (each input has a constraint)"
            ));
        }
        if self.b_g1.count != self.b_g2.count {
            return fail(format!(
                "`b_g1` has {} points and `b_g2` {}",
                self.b_g1.count, self.b_g2.count
            ));
        }
        if self.a.count < inputs || self.a.count > inputs + aux {
            return fail(format!(
                "`a` has {} points; it must hold all {inputs} inputs and at most {aux} aux",
                self.a.count
            ));
        }
        if self.b_g1.count > inputs + aux {
            return fail(format!(
                "`b_g1` has {} points, more than {inputs} inputs + {aux} aux",
                self.b_g1.count
            ));
        }
        Ok(())
    }
}
