//! The integer arrays of a view line (`input_ids`, masks, labels, `keep_msgs`, packing
//! boundaries), read straight into their stored width.

use serde::Deserialize;

/// A JSON array of integers stored narrow (`i32` token ids, `i8` mask values), read
/// without a 64-bit copy: each value is parsed as an integer and pushed as `T`. The first
/// value that is not an integer or does not fit `T` stops the parse there, so the error
/// names the first offending position of the line (`input_ids[1]`), in the field's
/// terms ([`NarrowInt::misfit`]).
#[derive(Debug, Default)]
pub(super) struct Narrow<T> {
    pub(super) values: Vec<T>,
}

/// An integer type an id or mask array is stored as, with the thread's reusable buffer for
/// the array being read: reading a long array costs one allocation of its exact size
/// instead of a chain of doublings.
pub(super) trait NarrowInt: TryFrom<i64> + Copy + 'static {
    fn with_scratch<R>(f: impl FnOnce(&mut Vec<Self>) -> R) -> R;
    /// Why `value` cannot be stored (`None`: beyond 64 bits, read by serde_json as a float).
    fn misfit(value: Option<i128>) -> String;
}

thread_local! {
    static SCRATCH_I32: std::cell::RefCell<Vec<i32>> = const { std::cell::RefCell::new(Vec::new()) };
    static SCRATCH_I8: std::cell::RefCell<Vec<i8>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl NarrowInt for i32 {
    fn with_scratch<R>(f: impl FnOnce(&mut Vec<i32>) -> R) -> R {
        SCRATCH_I32.with(|s| f(&mut s.borrow_mut()))
    }
    fn misfit(value: Option<i128>) -> String {
        let value = value.map_or("a value beyond 64 bits".to_string(), |v| v.to_string());
        format!("{value} does not fit a 32-bit integer")
    }
}

impl NarrowInt for i8 {
    fn with_scratch<R>(f: impl FnOnce(&mut Vec<i8>) -> R) -> R {
        SCRATCH_I8.with(|s| f(&mut s.borrow_mut()))
    }
    fn misfit(value: Option<i128>) -> String {
        // 0/1 and the usual mistakes (-100, 2) fit and are kept for the contract to report
        let value = value.map_or("beyond 64 bits".to_string(), |v| v.to_string());
        format!("mask value {value} is outside -128..127")
    }
}

/// Reads one integer of an id or mask array straight into the array being built as `T`;
/// a value that does not fit is an error in the field's terms ([`NarrowInt::misfit`]), a
/// fraction or any other JSON value a type error (serde's wording).
struct Push<'a, T>(&'a mut Vec<T>);

impl<'de, T: NarrowInt> serde::de::DeserializeSeed<'de> for Push<'_, T> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_i64(self)
    }
}

impl<'de, T: NarrowInt> serde::de::Visitor<'de> for Push<'_, T> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an integer")
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<(), E> {
        let t = T::try_from(v).map_err(|_| E::custom(T::misfit(Some(i128::from(v)))))?;
        self.0.push(t);
        Ok(())
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<(), E> {
        match i64::try_from(v) {
            Ok(v) => self.visit_i64(v),
            Err(_) => Err(E::custom(T::misfit(Some(i128::from(v))))),
        }
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<(), E> {
        // an integer beyond 64 bits comes as a float; a fraction is refused as a type error
        if v.fract() == 0.0 && v.abs() >= 9.223_372_036_854_775e18 {
            Err(E::custom(T::misfit(None)))
        } else {
            Err(E::invalid_type(serde::de::Unexpected::Float(v), &self))
        }
    }
}

impl<'de, T: NarrowInt> Deserialize<'de> for Narrow<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: NarrowInt> serde::de::Visitor<'de> for Visitor<T> {
            type Value = Narrow<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a sequence")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Narrow<T>, A::Error> {
                T::with_scratch(|scratch| {
                    scratch.clear();
                    while seq.next_element_seed(Push(&mut *scratch))?.is_some() {}
                    Ok(Narrow { values: scratch.as_slice().to_vec() })
                })
            }
        }
        deserializer.deserialize_seq(Visitor(std::marker::PhantomData))
    }
}
