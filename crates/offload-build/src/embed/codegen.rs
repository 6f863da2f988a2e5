//! Machine code of the registration constructor and destructor, per host ABI.
//!
//! The code does what clang's `__hip_module_ctor` / `__hip_module_dtor` do (host-objects
//! §1.3), unrolled per kernel and variable:
//!
//! ```text
//! ctor: if (handle == 0) handle = __hipRegisterFatBinary(&wrapper);
//!       for each kernel:   __hipRegisterFunction(handle, &kernel_handle, name, name, -1, 0, 0, 0, 0, 0);
//!       for each variable: __hipRegisterVar(handle, &shadow, name, name, extern, size, constant, 0);
//!       atexit(dtor);
//! dtor: if (handle != 0) { __hipUnregisterFatBinary(handle); handle = 0; }
//! ```
//!
//! Every reference to the object's own data goes through a *section* symbol plus an offset,
//! so it is PC- or TOC-relative and never preemptible: the code links into executables, PIEs
//! and shared libraries alike. Calls go through the PLT (ELF) or a direct `call` (COFF, where
//! the linker adds import thunks).
//!
//! | ABI | argument registers | stack arguments | references |
//! |---|---|---|---|
//! | x86-64 System V | rdi rsi rdx rcx r8 r9 | `[rsp]`… | `R_X86_64_PC32`, calls `R_X86_64_PLT32` |
//! | x86-64 Windows | rcx rdx r8 r9 | `[rsp+32]`… (after the shadow space) | `IMAGE_REL_AMD64_REL32` |
//! | AArch64 AAPCS64 | x0–x7 | `[sp]`… | `ADR_PREL_PG_HI21` + `ADD_ABS_LO12_NC`/`LDST64_ABS_LO12_NC`, `CALL26` |
//! | ppc64le ELFv2 | r3–r10 | `96(r1)`… (parameter save area) | `TOC16_HA` + `TOC16_LO[_DS]`, `REL24` + `nop`, `.TOC.` via `REL16_HA/LO` |

use object::elf;
use object::write::{Relocation, SymbolId};
use object::{RelocationEncoding, RelocationFlags, RelocationKind};

use super::target::{HostArch, HostFormat, HostTarget};
use super::{DeviceVariable, EmbedError};

/// A place in the object: a (section) symbol and an offset from it.
pub(crate) type Place = (SymbolId, u64);

/// Everything the code refers to.
pub(crate) struct Refs<'a> {
    pub handle: Place,
    pub wrapper: Place,
    /// The section symbol of the section the code goes into.
    pub text: SymbolId,
    pub register_fatbin: SymbolId,
    pub register_function: SymbolId,
    pub register_var: SymbolId,
    pub unregister: SymbolId,
    pub atexit: SymbolId,
    /// `.TOC.` (ppc64le only).
    pub toc: Option<SymbolId>,
    /// Per kernel: its host handle and its name string.
    pub kernels: Vec<(Place, Place)>,
    /// Per variable: its shadow, its name string and its description.
    pub variables: Vec<(Place, Place, &'a DeviceVariable)>,
}

/// The generated code: constructor and destructor in one buffer.
pub(crate) struct Code {
    pub bytes: Vec<u8>,
    pub relocations: Vec<Relocation>,
    pub ctor: (u64, u64),
    pub dtor: (u64, u64),
}

/// Generates the code for `target` (placed at offset 0 of the section of `refs.text`).
pub(crate) fn generate(target: HostTarget, refs: &Refs<'_>) -> Result<Code, EmbedError> {
    let mut a = Asm::default();
    match (target.arch, target.format) {
        (HostArch::X86_64, format) => x86_64(&mut a, refs, format == HostFormat::Coff),
        (HostArch::Aarch64, _) => aarch64(&mut a, refs),
        (HostArch::Ppc64le, _) => ppc64le(&mut a, refs)?,
    }
    Ok(Code {
        bytes: a.bytes,
        relocations: a.relocs,
        ctor: a.ctor,
        dtor: a.dtor,
    })
}

#[derive(Default)]
struct Asm {
    bytes: Vec<u8>,
    relocs: Vec<Relocation>,
    ctor: (u64, u64),
    dtor: (u64, u64),
}

impl Asm {
    fn pos(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn b(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
    }

    fn u32(&mut self, insn: u32) {
        self.bytes.extend_from_slice(&insn.to_le_bytes());
    }

    fn reloc(&mut self, offset: u64, (symbol, off): Place, bias: i64, flags: RelocationFlags) {
        self.relocs.push(Relocation {
            offset,
            symbol,
            addend: off as i64 + bias,
            flags,
        });
    }

    fn align(&mut self, to: usize, fill: &[u8]) {
        while self.bytes.len() % to != 0 {
            let n = (to - self.bytes.len() % to).min(fill.len());
            self.bytes.extend_from_slice(&fill[..n]);
        }
    }

    /// Patches the 32-bit instruction at `at` by OR-ing `bits` into it.
    fn patch_or(&mut self, at: u64, bits: u32) {
        let at = at as usize;
        let old = u32::from_le_bytes(self.bytes[at..at + 4].try_into().expect("4 bytes"));
        self.bytes[at..at + 4].copy_from_slice(&(old | bits).to_le_bytes());
    }
}

// ---------------------------------------------------------------------------------------------
// x86-64 (System V for ELF, Windows x64 for COFF)

fn x86_64(a: &mut Asm, r: &Refs<'_>, win: bool) {
    // A 32-bit PC-relative field: COFF's generic relative relocation, or this ELF type.
    let pc32 = move |a: &mut Asm, place: Place, bias: i64, elf_type: u32| {
        let flags = if win {
            RelocationFlags::Generic {
                kind: RelocationKind::Relative,
                encoding: RelocationEncoding::Generic,
                size: 32,
            }
        } else {
            RelocationFlags::Elf { r_type: elf_type }
        };
        let at = a.pos();
        a.reloc(at, place, bias, flags);
        a.b(&[0; 4]);
    };
    let rel = |a: &mut Asm, place: Place, bias: i64| pc32(a, place, bias, elf::R_X86_64_PC32);
    let call = |a: &mut Asm, sym: SymbolId, jump: bool| {
        a.b(&[if jump { 0xe9 } else { 0xe8 }]);
        pc32(a, (sym, 0), -4, elf::R_X86_64_PLT32);
    };

    // dtor
    let start = a.pos();
    if win {
        a.b(&[0x48, 0x8b, 0x0d]); // mov rcx, [rip+handle]
        rel(a, r.handle, -4);
        a.b(&[0x48, 0x85, 0xc9]); // test rcx, rcx
        a.b(&[0x74, 4 + 5 + 11 + 4]); // je .ret
        a.b(&[0x48, 0x83, 0xec, 0x28]); // sub rsp, 40
    } else {
        a.b(&[0x48, 0x8b, 0x3d]); // mov rdi, [rip+handle]
        rel(a, r.handle, -4);
        a.b(&[0x48, 0x85, 0xff]); // test rdi, rdi
        a.b(&[0x74, 1 + 5 + 11 + 1]); // je .ret
        a.b(&[0x50]); // push rax (align the stack)
    }
    call(a, r.unregister, false);
    a.b(&[0x48, 0xc7, 0x05]); // mov qword [rip+handle], 0
    rel(a, r.handle, -8);
    a.b(&[0, 0, 0, 0]);
    if win {
        a.b(&[0x48, 0x83, 0xc4, 0x28]); // add rsp, 40
    } else {
        a.b(&[0x58]); // pop rax
    }
    a.b(&[0xc3]); // ret
    a.dtor = (start, a.pos() - start);
    a.align(16, &[0xcc]);

    // ctor
    let start = a.pos();
    let frame: u8 = if win { 80 } else { 32 };
    // Stack argument slots: SysV from [rsp], Windows after the 32-byte shadow space.
    let slot0: u8 = if win { 32 } else { 0 };
    a.b(&[0x53]); // push rbx
    a.b(&[0x48, 0x83, 0xec, frame]); // sub rsp, frame
    a.b(&[0x48, 0x8b, 0x05]); // mov rax, [rip+handle]
    rel(a, r.handle, -4);
    a.b(&[0x48, 0x85, 0xc0]); // test rax, rax
    a.b(&[0x75, 7 + 5 + 7]); // jne 1f
    if win {
        a.b(&[0x48, 0x8d, 0x0d]); // lea rcx, [rip+wrapper]
    } else {
        a.b(&[0x48, 0x8d, 0x3d]); // lea rdi, [rip+wrapper]
    }
    rel(a, r.wrapper, -4);
    call(a, r.register_fatbin, false);
    a.b(&[0x48, 0x89, 0x05]); // mov [rip+handle], rax
    rel(a, r.handle, -4);
    a.b(&[0x48, 0x89, 0xc3]); // 1: mov rbx, rax

    // mov qword [rsp+disp8], imm32 (sign-extended)
    let store = |a: &mut Asm, disp: u8, imm: i32| {
        if disp == 0 {
            a.b(&[0x48, 0xc7, 0x04, 0x24]);
        } else {
            a.b(&[0x48, 0xc7, 0x44, 0x24, disp]);
        }
        a.b(&imm.to_le_bytes());
    };
    // The first four arguments: handle, a data address, the name twice.
    let head = |a: &mut Asm, object: Place, name: Place| {
        if win {
            a.b(&[0x48, 0x89, 0xd9]); // mov rcx, rbx
            a.b(&[0x48, 0x8d, 0x15]); // lea rdx, [rip+object]
            rel(a, object, -4);
            a.b(&[0x4c, 0x8d, 0x05]); // lea r8, [rip+name]
            rel(a, name, -4);
            a.b(&[0x4d, 0x89, 0xc1]); // mov r9, r8
        } else {
            a.b(&[0x48, 0x89, 0xdf]); // mov rdi, rbx
            a.b(&[0x48, 0x8d, 0x35]); // lea rsi, [rip+object]
            rel(a, object, -4);
            a.b(&[0x48, 0x8d, 0x15]); // lea rdx, [rip+name]
            rel(a, name, -4);
            a.b(&[0x48, 0x89, 0xd1]); // mov rcx, rdx
        }
    };
    for &(handle, name) in &r.kernels {
        head(a, handle, name);
        if win {
            store(a, slot0, -1); // threadLimit
            for i in 1..6 {
                store(a, slot0 + 8 * i, 0);
            }
        } else {
            a.b(&[0x41, 0xb8, 0xff, 0xff, 0xff, 0xff]); // mov r8d, -1
            a.b(&[0x45, 0x31, 0xc9]); // xor r9d, r9d
            for i in 0..4 {
                store(a, slot0 + 8 * i, 0);
            }
        }
        call(a, r.register_function, false);
    }
    for &(shadow, name, v) in &r.variables {
        head(a, shadow, name);
        if win {
            store(a, slot0, i32::from(v.external));
            a.b(&[0x48, 0xb8]); // movabs rax, size
            a.b(&v.size.to_le_bytes());
            a.b(&[0x48, 0x89, 0x44, 0x24, slot0 + 8]); // mov [rsp+slot0+8], rax
            store(a, slot0 + 16, i32::from(v.constant));
            store(a, slot0 + 24, 0);
        } else {
            a.b(&[0x41, 0xb8]); // mov r8d, external
            a.b(&u32::from(v.external).to_le_bytes());
            a.b(&[0x49, 0xb9]); // movabs r9, size
            a.b(&v.size.to_le_bytes());
            store(a, slot0, i32::from(v.constant));
            store(a, slot0 + 8, 0);
        }
        call(a, r.register_var, false);
    }
    if win {
        a.b(&[0x48, 0x8d, 0x0d]); // lea rcx, [rip+dtor]
    } else {
        a.b(&[0x48, 0x8d, 0x3d]); // lea rdi, [rip+dtor]
    }
    rel(a, (r.text, a.dtor.0), -4);
    a.b(&[0x48, 0x83, 0xc4, frame]); // add rsp, frame
    a.b(&[0x5b]); // pop rbx
    call(a, r.atexit, true); // jmp atexit (tail call)
    a.ctor = (start, a.pos() - start);
}

// ---------------------------------------------------------------------------------------------
// AArch64 (AAPCS64, ELF)

fn aarch64(a: &mut Asm, r: &Refs<'_>) {
    fn flags(r_type: u32) -> RelocationFlags {
        RelocationFlags::Elf { r_type }
    }
    // adrp xd, place ; add xd, xd, :lo12:place
    let addr = |a: &mut Asm, rd: u32, place: Place| {
        let at = a.pos();
        a.reloc(at, place, 0, flags(elf::R_AARCH64_ADR_PREL_PG_HI21));
        a.u32(0x9000_0000 | rd);
        let at = a.pos();
        a.reloc(at, place, 0, flags(elf::R_AARCH64_ADD_ABS_LO12_NC));
        a.u32(0x9100_0000 | (rd << 5) | rd);
    };
    // adrp x8, place ; (ldr|str) xt, [x8, :lo12:place]
    let mem = |a: &mut Asm, store: bool, rt: u32, place: Place| {
        let at = a.pos();
        a.reloc(at, place, 0, flags(elf::R_AARCH64_ADR_PREL_PG_HI21));
        a.u32(0x9000_0008);
        let at = a.pos();
        a.reloc(at, place, 0, flags(elf::R_AARCH64_LDST64_ABS_LO12_NC));
        let op = if store { 0xf900_0000 } else { 0xf940_0000 };
        a.u32(op | (8 << 5) | rt);
    };
    let call = |a: &mut Asm, sym: SymbolId, jump: bool| {
        let at = a.pos();
        if jump {
            a.reloc(at, (sym, 0), 0, flags(elf::R_AARCH64_JUMP26));
            a.u32(0x1400_0000);
        } else {
            a.reloc(at, (sym, 0), 0, flags(elf::R_AARCH64_CALL26));
            a.u32(0x9400_0000);
        }
    };
    // mov (x|w)d, #imm via movz/movk
    let imm = |a: &mut Asm, rd: u32, value: u64| {
        a.u32(0xd280_0000 | (((value & 0xffff) as u32) << 5) | rd); // movz xd, #lo
        for hw in 1..4u32 {
            let part = ((value >> (16 * hw)) & 0xffff) as u32;
            if part != 0 {
                a.u32(0xf280_0000 | (hw << 21) | (part << 5) | rd); // movk xd, #part, lsl #16*hw
            }
        }
    };

    // dtor
    let start = a.pos();
    mem(a, false, 0, r.handle); // ldr x0, handle
    let cbz = a.pos();
    a.u32(0xb400_0000); // cbz x0, .ret (patched)
    a.u32(0xa9bf_7bfd); // stp x29, x30, [sp, #-16]!
    call(a, r.unregister, false);
    mem(a, true, 31, r.handle); // str xzr, handle
    a.u32(0xa8c1_7bfd); // ldp x29, x30, [sp], #16
    let ret = a.pos();
    a.u32(0xd65f_03c0); // ret
    a.patch_or(cbz, ((((ret - cbz) / 4) as u32) & 0x7ffff) << 5);
    a.dtor = (start, a.pos() - start);
    a.align(16, &[0; 4]);

    // ctor
    let start = a.pos();
    a.u32(0xd101_03ff); // sub sp, sp, #64
    a.u32(0xa903_7bfd); // stp x29, x30, [sp, #48]
    a.u32(0xf900_13f3); // str x19, [sp, #32]
    mem(a, false, 0, r.handle); // ldr x0, handle
    let cbnz = a.pos();
    a.u32(0xb500_0000); // cbnz x0, 1f (patched)
    addr(a, 0, r.wrapper);
    call(a, r.register_fatbin, false);
    mem(a, true, 0, r.handle); // str x0, handle
    let one = a.pos();
    a.patch_or(cbnz, ((((one - cbnz) / 4) as u32) & 0x7ffff) << 5);
    a.u32(0xaa00_03f3); // 1: mov x19, x0
    for &(handle, name) in &r.kernels {
        a.u32(0xaa13_03e0); // mov x0, x19
        addr(a, 1, handle);
        addr(a, 2, name);
        a.u32(0xaa02_03e3); // mov x3, x2
        a.u32(0x1280_0004); // mov w4, #-1
        a.u32(0xaa1f_03e5); // mov x5, xzr
        a.u32(0xaa1f_03e6); // mov x6, xzr
        a.u32(0xaa1f_03e7); // mov x7, xzr
        a.u32(0xa900_7fff); // stp xzr, xzr, [sp]   (gridDim, wSize)
        call(a, r.register_function, false);
    }
    for &(shadow, name, v) in &r.variables {
        a.u32(0xaa13_03e0); // mov x0, x19
        addr(a, 1, shadow);
        addr(a, 2, name);
        a.u32(0xaa02_03e3); // mov x3, x2
        a.u32(0x5280_0004 | (u32::from(v.external) << 5)); // mov w4, #external
        imm(a, 5, v.size);
        a.u32(0x5280_0006 | (u32::from(v.constant) << 5)); // mov w6, #constant
        a.u32(0x5280_0007); // mov w7, #0
        call(a, r.register_var, false);
    }
    addr(a, 0, (r.text, a.dtor.0));
    a.u32(0xf940_13f3); // ldr x19, [sp, #32]
    a.u32(0xa943_7bfd); // ldp x29, x30, [sp, #48]
    a.u32(0x9101_03ff); // add sp, sp, #64
    call(a, r.atexit, true); // b atexit (tail call)
    a.ctor = (start, a.pos() - start);
}

// ---------------------------------------------------------------------------------------------
// ppc64le (ELFv2)

/// Offset of the local entry point from the global one (the TOC setup).
pub(crate) const PPC64_LOCAL_ENTRY: u64 = 8;

fn ppc64le(a: &mut Asm, r: &Refs<'_>) -> Result<(), EmbedError> {
    let toc = r.toc.expect("ppc64le code needs .TOC.");
    fn flags(r_type: u32) -> RelocationFlags {
        RelocationFlags::Elf { r_type }
    }
    // addis r2, r12, (.TOC.-func)@ha ; addi r2, r2, (.TOC.-func)@l
    let global_entry = |a: &mut Asm| {
        let at = a.pos();
        a.reloc(at, (toc, 0), 0, flags(elf::R_PPC64_REL16_HA));
        a.u32(0x3c4c_0000);
        let at = a.pos();
        a.reloc(at, (toc, 0), 4, flags(elf::R_PPC64_REL16_LO));
        a.u32(0x3842_0000);
    };
    // addis rd, r2, place@toc@ha ; addi rd, rd, place@toc@l
    let addr = |a: &mut Asm, rd: u32, place: Place| {
        let at = a.pos();
        a.reloc(at, place, 0, flags(elf::R_PPC64_TOC16_HA));
        a.u32(0x3c02_0000 | (rd << 21));
        let at = a.pos();
        a.reloc(at, place, 0, flags(elf::R_PPC64_TOC16_LO));
        a.u32(0x3800_0000 | (rd << 21) | (rd << 16));
    };
    // addis rb, r2, place@toc@ha ; (ld|std) rt, place@toc@l(rb)
    let mem = |a: &mut Asm, store: bool, rt: u32, rb: u32, place: Place| {
        let at = a.pos();
        a.reloc(at, place, 0, flags(elf::R_PPC64_TOC16_HA));
        a.u32(0x3c02_0000 | (rb << 21));
        let at = a.pos();
        a.reloc(at, place, 0, flags(elf::R_PPC64_TOC16_LO_DS));
        let op = if store { 0xf800_0000 } else { 0xe800_0000 };
        a.u32(op | (rt << 21) | (rb << 16));
    };
    // bl sym ; nop (the linker may turn the nop into a TOC restore)
    let call = |a: &mut Asm, sym: SymbolId| {
        let at = a.pos();
        a.reloc(at, (sym, 0), 0, flags(elf::R_PPC64_REL24));
        a.u32(0x4800_0001);
        a.u32(0x6000_0000);
    };
    let li = |a: &mut Asm, rd: u32, v: i16| a.u32(0x3800_0000 | (rd << 21) | u32::from(v as u16));
    let mr =
        |a: &mut Asm, ra: u32, rs: u32| a.u32(0x7c00_0378 | (rs << 21) | (ra << 16) | (rs << 11));

    // dtor
    let start = a.pos();
    global_entry(a);
    a.u32(0x7c08_02a6); // mflr r0
    a.u32(0xf801_0010); // std r0, 16(r1)
    a.u32(0xf821_ffe1); // stdu r1, -32(r1)
    mem(a, false, 3, 3, r.handle); // ld r3, handle
    a.u32(0x2c23_0000); // cmpdi r3, 0
    let beq = a.pos();
    a.u32(0x4182_0000); // beq .out (patched)
    call(a, r.unregister);
    li(a, 3, 0);
    mem(a, true, 3, 4, r.handle); // std r3, handle
    let out = a.pos();
    a.patch_or(beq, ((out - beq) as u32) & 0xfffc);
    a.u32(0x3821_0020); // addi r1, r1, 32
    a.u32(0xe801_0010); // ld r0, 16(r1)
    a.u32(0x7c08_03a6); // mtlr r0
    a.u32(0x4e80_0020); // blr
    a.dtor = (start, a.pos() - start);
    a.align(16, &0x6000_0000u32.to_le_bytes());

    // ctor: frame of 128 bytes = 32 header + 80 parameter save area, r31 saved below it.
    let start = a.pos();
    global_entry(a);
    a.u32(0x7c08_02a6); // mflr r0
    a.u32(0xf801_0010); // std r0, 16(r1)
    a.u32(0xfbe1_fff8); // std r31, -8(r1)
    a.u32(0xf821_ff81); // stdu r1, -128(r1)
    mem(a, false, 3, 3, r.handle); // ld r3, handle
    a.u32(0x2c23_0000); // cmpdi r3, 0
    let bne = a.pos();
    a.u32(0x4082_0000); // bne 1f (patched)
    addr(a, 3, r.wrapper);
    call(a, r.register_fatbin);
    mem(a, true, 3, 4, r.handle); // std r3, handle
    let one = a.pos();
    a.patch_or(bne, ((one - bne) as u32) & 0xfffc);
    mr(a, 31, 3); // 1: mr r31, r3
    for &(handle, name) in &r.kernels {
        mr(a, 3, 31);
        addr(a, 4, handle);
        addr(a, 5, name);
        mr(a, 6, 5);
        li(a, 7, -1);
        for rd in 8..=11 {
            li(a, rd, 0);
        }
        a.u32(0xf961_0060); // std r11, 96(r1)   (gridDim)
        a.u32(0xf961_0068); // std r11, 104(r1)  (wSize)
        call(a, r.register_function);
    }
    for &(shadow, name, v) in &r.variables {
        if v.size > 0x7fff_ffff {
            return Err(EmbedError::Limit(format!(
                "device variable '{}' has {} bytes; ppc64le registration supports up to 2 GiB",
                v.name, v.size
            )));
        }
        mr(a, 3, 31);
        addr(a, 4, shadow);
        addr(a, 5, name);
        mr(a, 6, 5);
        li(a, 7, i16::from(v.external));
        a.u32(0x3d00_0000 | (v.size >> 16) as u32); // lis r8, size@h
        a.u32(0x6108_0000 | (v.size & 0xffff) as u32); // ori r8, r8, size@l
        li(a, 9, i16::from(v.constant));
        li(a, 10, 0);
        call(a, r.register_var);
    }
    addr(a, 3, (r.text, a.dtor.0));
    call(a, r.atexit);
    a.u32(0x3821_0080); // addi r1, r1, 128
    a.u32(0xe801_0010); // ld r0, 16(r1)
    a.u32(0xebe1_fff8); // ld r31, -8(r1)
    a.u32(0x7c08_03a6); // mtlr r0
    a.u32(0x4e80_0020); // blr
    a.ctor = (start, a.pos() - start);
    Ok(())
}
